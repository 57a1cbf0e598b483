/**
 * A session's hold on its browser: which worker has it open (and that worker's own task
 * queue), the heartbeating activity that tells the worker is alive, and what is done when it
 * is not (ask it again briefly, else restore the session on another worker). Deterministic:
 * no I/O, no Node.
 */
import * as wf from '@temporalio/workflow';
import type { Placement, SessionActivities } from '../activities/session.activities';
import type { BrowserActivities } from '../activities/browser.activities';
import { applicationFailureOf, detailsOf } from './failures';
import { records, setStatus } from './session-records';
import type { SessionState } from './session-state';
import type { SessionInput } from '../contracts/session-types';

/** A browser worker, as the registry names it and as activities reach it. */
export interface BrowserWorker {
  workerId: string;
  taskQueue: string;
}

const MAX_ASSIGN_ATTEMPTS = 3;
/** How long a worker whose lease timed out has to answer before its session is restored elsewhere. */
const RECLAIM_WAIT = '5s';
const RESTORE_RETRY_MS = 2000;

/**
 * Picking a browser worker is one read of the registry: run beside the workflow (a local
 * activity), it saves a round trip through the server on the way to a session's first page.
 */
const local = wf.proxyLocalActivities<SessionActivities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 10 },
});
/** Sessions started before worker picks ran as local activities replay the way they ran. */
const assignWorker = (args: Parameters<SessionActivities['assignWorker']>[0]) => (wf.patched('assign-worker-locally') ? local.assignWorker(args) : records.assignWorker(args));
/**
 * Picks the worker and, when the pick is the process running this workflow task and the
 * session is plain, opens the browser there and then (see placeSession). Sessions started
 * before that replay their separate pick and open.
 */
const place = async (args: Parameters<SessionActivities['placeSession']>[0]): Promise<Placement | null> =>
  wf.patched('open-browser-in-place') ? local.placeSession(args) : assignWorker({ sessionId: args.sessionId, exclude: args.exclude });

/** Activities on the worker that holds this session's browser. A dead worker shows as a timeout. */
export function browserOn(taskQueue: string) {
  const once = { taskQueue, scheduleToStartTimeout: '15s', retry: { maximumAttempts: 1 } } as const;
  return {
    control: wf.proxyActivities<BrowserActivities>({ ...once, startToCloseTimeout: '60s' }),
    // A cancelled step is waited for, so a human taking over never races the agent's last action.
    agent: wf.proxyActivities<BrowserActivities>({
      ...once,
      startToCloseTimeout: '10m',
      heartbeatTimeout: '10s',
      cancellationType: wf.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    }),
    lease: wf.proxyActivities<BrowserActivities>({
      ...once,
      startToCloseTimeout: '30d',
      // Long enough for a worker busy with many sessions at once: at 4 s, 10 of 20 sessions
      // starting tasks together were taken for lost while their worker was alive.
      heartbeatTimeout: '12s',
      cancellationType: wf.ActivityCancellationType.TRY_CANCEL,
    }),
  };
}

export type BrowserOn = ReturnType<typeof browserOn>;

/**
 * Owns the worker that holds the session's browser and the lease on it. `lost` is set when
 * the lease or a step finds the worker gone; `recover` then brings the session back.
 */
export class BrowserLease {
  #worker?: BrowserWorker;
  /** The scope of the running holdBrowser activity; cancelled to let the browser go. */
  #scope?: wf.CancellationScope;
  /** The worker found gone, until the session is recovered. */
  #lost?: BrowserWorker;
  /** When the browser was found gone, and whether its worker handed the session over (it is stopping). */
  #lostAt = 0;
  #handedOver = false;

  constructor(
    private readonly input: SessionInput,
    private readonly state: SessionState,
    /** Told when the lease finds the worker gone (the step in flight is cancelled). */
    private readonly onLost: () => void,
  ) {}

  /** The worker holding the browser (the last one, if it was lost); none before the first placement. */
  get worker(): BrowserWorker | undefined {
    return this.#worker;
  }

  get lost(): boolean {
    return this.#lost !== undefined;
  }

  /** A step found the worker gone. */
  markLost(): void {
    if (this.#lost) return;
    this.#lost = this.#worker;
    this.#lostAt = Date.now();
  }

  /** Activities on the worker holding the browser; throws before the session has one. */
  browser(): BrowserOn {
    if (!this.#worker) throw wf.ApplicationFailure.create({ type: 'SESSION_NOT_READY', message: 'The session has no browser yet', nonRetryable: true });
    return browserOn(this.#worker.taskQueue);
  }

  /** The worker of the run before continue-as-new still holds the browser: the lease goes on. */
  carryOver(worker: BrowserWorker): void {
    this.#placeOn(worker.workerId, worker.taskQueue);
  }

  /** Lets the browser go (the session ends or continues as new): the worker stops watching the lease. */
  release(): void {
    this.#scope?.cancel();
    this.#scope = undefined;
  }

  /**
   * Finds a worker that opens the browser (restoring page and storage if asked; `wake`: a
   * hibernated session's sealed state), until the deadline.
   */
  async acquire(restore: boolean | 'wake', exclude: string[], deadline: number): Promise<boolean> {
    const { input, state } = this;
    const sessionId = state.sessionId;
    const tried = [...exclude];
    for (let attempt = 0; ; attempt++) {
      const plain = !restore && !input.profile && !input.proxy;
      const assigned = await place({ sessionId, exclude: tried, ...(plain ? { open: { userId: input.userId } } : {}) });
      if (assigned) {
        tried.push(assigned.workerId);
        try {
          if (!assigned.opened) {
            await browserOn(assigned.taskQueue).control.openBrowser({ sessionId, userId: input.userId, restore: restore !== false, ...(restore === 'wake' ? { wake: true } : {}), profile: input.profile, proxy: input.proxy, policyId: input.policyId });
          }
          this.#placeOn(assigned.workerId, assigned.taskQueue);
          return true;
        } catch (err) {
          wf.log.warn('browser worker could not open a browser', { workerId: assigned.workerId, error: String(err) });
          // The session's proxy refused or is unreachable: another worker would not do better.
          const refused = applicationFailureOf(err);
          if (refused?.type === 'PROXY_CONNECTION_FAILED') {
            state.fail({ code: refused.type, message: refused.message, details: detailsOf(refused) });
            return false;
          }
        }
      }
      if (!restore) {
        if (!assigned || attempt + 1 >= MAX_ASSIGN_ATTEMPTS) return false;
        continue;
      }
      if (Date.now() + RESTORE_RETRY_MS > deadline) return false;
      await wf.sleep(RESTORE_RETRY_MS);
      if (!assigned) tried.splice(exclude.length); // workers that failed once may take it now
    }
  }

  /**
   * The worker died, or handed the session over as it stops: the session is orphaned and
   * comes back on another worker within the grace period; `instance:reconnected` tells how
   * long it waited for its new browser.
   */
  async recover(): Promise<boolean> {
    const { input, state } = this;
    const lost = this.#lost;
    if (!lost) return true; // nothing to recover
    const handedOver = this.#handedOver;
    await setStatus(state, 'orphaned');
    const reason = handedOver ? 'The browser instance is stopping; the session moves to another one' : 'The browser instance stopped responding';
    await records.publishConnection({ sessionId: state.sessionId, event: { event: 'instance:disconnected', reason } });
    // A worker that only missed its heartbeats (stalled under load, paused) still holds the
    // browser: it is asked first, briefly, and keeps the session as it is. A dead one costs
    // the short wait before the restore elsewhere; one that handed the session over is not
    // asked. Sessions recovered before this replay as they ran.
    const reclaimed = !handedOver && wf.patched('recover-on-live-worker') && (await this.#reclaim(lost));
    const restored = reclaimed || (await this.acquire(true, [lost.workerId], Date.now() + input.orphanGraceMs));
    if (!restored) {
      state.requestEnd('instance_lost');
      return false;
    }
    const waitedMs = Date.now() - this.#lostAt;
    this.#lost = undefined;
    this.#handedOver = false;
    await setStatus(state, 'active');
    await records.publishConnection({ sessionId: state.sessionId, event: { event: 'instance:reconnected', workerId: state.workerId, waitedMs, ...(handedOver ? { handedOver } : {}) } });
    return true;
  }

  /** The worker that held the browser takes the session again, if it answers within a few seconds. */
  async #reclaim({ workerId, taskQueue }: BrowserWorker): Promise<boolean> {
    const { input, state } = this;
    try {
      await wf
        .proxyActivities<BrowserActivities>({ taskQueue, scheduleToStartTimeout: RECLAIM_WAIT, startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } })
        .openBrowser({ sessionId: state.sessionId, userId: input.userId, restore: true, profile: input.profile, proxy: input.proxy, policyId: input.policyId });
    } catch (err) {
      wf.log.warn('the browser worker did not answer; the session is restored elsewhere', { workerId, error: String(err) });
      return false;
    }
    this.#placeOn(workerId, taskQueue);
    return true;
  }

  /** The browser is open on this worker: the session records it and the lease starts. */
  #placeOn(workerId: string, taskQueue: string): void {
    const worker = { workerId, taskQueue };
    this.#worker = worker;
    this.state.placeOn(workerId);
    this.#hold(worker);
  }

  /**
   * Keeps a heartbeating activity on the browser's worker; its failure means the worker is
   * gone, its answer 'handed_over' that the worker stops and saved the session for the next.
   */
  #hold(worker: BrowserWorker): void {
    this.#scope?.cancel();
    const scope = new wf.CancellationScope();
    this.#scope = scope;
    const lose = (handedOver: boolean) => {
      this.#lost = worker;
      this.#lostAt = Date.now();
      this.#handedOver = handedOver;
      this.onLost();
    };
    scope
      .run(() => browserOn(worker.taskQueue).lease.holdBrowser({ sessionId: this.state.sessionId }))
      .then(
        (ended) => {
          if (ended !== 'handed_over' || this.#scope !== scope) return;
          wf.log.info('browser worker stopping; the session moves', { workerId: worker.workerId });
          lose(true);
        },
        (err) => {
          if (wf.isCancellation(err) || this.#scope !== scope) return;
          wf.log.warn('browser worker lost', { workerId: this.state.workerId, error: String(err) });
          lose(false);
        },
      );
  }
}
