import type { BrowserContext } from 'playwright-core';
import type { AgentRunner } from '../agent/agent';
import { maskedStep } from '../agent/record-step';
import type { SecretVault } from '../agent/secrets/vault';
import type { Spending } from '../agent/step-context';
import type { SavedMemory } from '../agent/task-memory';
import type { BrowserPool, RestoreState } from '../browser/pool';
import type { TrafficMeter } from '../browser/traffic-meter';
import { failureOf, isServiceError, toTemporalFailure } from '../contracts/errors';
import type { ProfileMaterializer, ProfileSource } from '../contracts/profiles';
import type { InteractionAction, SessionProxy, StepInput, StepRequest } from '../contracts/session-types';
import type { EventPublisher } from '../events/publisher';
import type { Logger } from '../logger';
import type { Recorder } from '../recording/recorder';
import type { HibernationsRepository } from '../store/hibernations.repository';
import type { Store } from '../store/store';
import { runAgentStep, StepFailure, type StepAnswer, type StepDeps } from './agent-step';
import { Handover, type HoldEnd } from './handover';
import { keepSnapshots, Leases } from './lease';
import { manualStepFacts, performManual } from './manual-input';
import { SessionSnapshots } from './snapshots';
import { TaskContexts } from './task-contexts';

export interface HeldSessionsDeps {
  pool: BrowserPool;
  agent: AgentRunner;
  events: EventPublisher;
  store: Store;
  profiles?: ProfileMaterializer;
  /** Cleans up what the session left on this worker's disk (fetched task files). */
  onClosed?: (sessionId: string) => Promise<void>;
  /** The sessions' secret values: what leaves the worker is masked with them. */
  vault?: SecretVault;
  /** Writes a person's actions during a task into its recording. */
  recorder?: Recorder;
  /** Sealed states of hibernated sessions. */
  hibernations?: HibernationsRepository;
  /** Charges what each step spent as it ends (the task's end charges only the rest). */
  spending?: Pick<Spending, 'charge'>;
  /** Metered proxy traffic: charged as it flows, reported with the step. */
  meter?: Pick<TrafficMeter, 'takeForStep' | 'capStep'>;
  /** How long a browser whose session workflow is gone waits for a run that continued it as new (LEASE_HANDOVER_MS). */
  leaseHandoverMs?: number;
  logger: Logger;
}

/** Where a session's browser is opened from: a profile, a proxy, and a restore of what another worker held or a hibernation. */
export interface OpenRequest {
  sessionId: string;
  userId: string;
  restore?: boolean;
  wake?: boolean;
  profile?: ProfileSource;
  proxy?: SessionProxy;
  policyId?: string;
}

/**
 * How a held session leaves this worker: closed for good, sealed asleep, left behind by a
 * workflow that is gone, or handed over to another worker (what it saved stays for that one).
 */
type Ending = { kind: 'closed'; profile?: ProfileSource } | { kind: 'hibernated' } | { kind: 'abandoned' } | { kind: 'handedOver' };

/** What a hibernated session saved (sealed): its browser and the agent's memory of its task. */
interface Hibernated {
  browser: RestoreState;
  memory?: SavedMemory;
}

/**
 * The sessions a browser worker holds: their browsers (opened, hibernated, closed: one way
 * out), the lease that saves what a restore elsewhere needs, a person's input, the agent's
 * steps with their spending and proxy traffic, and each task's context brought by its first
 * step. Knows nothing of Temporal: the activities adapt it.
 */
export class HeldSessions {
  private readonly logger: Logger;
  private readonly leases: Leases;
  private readonly contexts = new TaskContexts();
  private readonly handover = new Handover();
  private readonly stepDeps: StepDeps;
  private readonly snapshots: SessionSnapshots;

  constructor(private readonly deps: HeldSessionsDeps) {
    this.logger = deps.logger.child({ component: 'held-sessions' });
    this.leases = new Leases(deps.leaseHandoverMs);
    const mask = (sessionId: string, text: string) => this.mask(sessionId, text);
    this.snapshots = new SessionSnapshots({ pool: deps.pool, store: deps.store, mask, logger: this.logger });
    this.stepDeps = { ...deps, mask, collect: (sessionId, taskId) => this.collect(sessionId, taskId), logger: this.logger };
  }

  /** Whether this worker holds the session's browser. */
  has(sessionId: string): boolean {
    return this.deps.pool.has(sessionId);
  }

  /** Whether this worker is stopping: it takes no session and no step, and hands over the ones it holds. */
  get draining(): boolean {
    return this.handover.draining;
  }

  private mask(sessionId: string, text: string): string {
    return this.deps.vault ? this.deps.vault.mask(sessionId, text) : text;
  }

  /**
   * Opens the session's browser here; `restore` brings back the page and storage saved by
   * the worker that held it; `wake` a hibernated session: its tabs, typed values, scroll
   * positions and the agent's conversation.
   */
  async open(req: OpenRequest): Promise<void> {
    const { pool, agent, profiles, vault, hibernations } = this.deps;
    const { sessionId, userId, restore, wake, profile, proxy, policyId } = req;
    if (pool.has(sessionId)) return;
    if (this.handover.draining) throw failureOf('INSTANCE_LOST', 'This browser instance is stopping and takes no sessions');
    // A session handed over by a worker that stopped left its state sealed, as a hibernation does.
    const woken = wake || restore ? await hibernations?.get<Hibernated>(sessionId) : null;
    const snapshot = !woken && (restore || wake) ? await this.deps.store.snapshots.get(sessionId) : null;
    if (profile && !profiles) throw failureOf('PROFILES_UNAVAILABLE', 'This worker has no profile storage');
    const userDataDir = profile ? await profiles!.materialize(profile, sessionId) : undefined;
    // Restored pages load under the session's policy: its domain guard is on before the first of them.
    const prepare = woken || snapshot ? (context: BrowserContext) => agent.guardContext(context, { policyId, userId }) : undefined;
    try {
      await pool.open(sessionId, { restore: woken?.browser ?? snapshot ?? undefined, userDataDir, userId, proxy, prepare });
    } catch (err) {
      // The workflow decides what a browser that does not open means: never retried here.
      if (isServiceError(err)) throw toTemporalFailure(err, { retry: false });
      throw err;
    }
    // What the session masked on the worker before comes back before anything of its pages goes out.
    if (restore || wake) await vault?.recall(sessionId);
    if (woken) {
      if (woken.memory) agent.restoreMemory(sessionId, woken.memory);
      await hibernations?.remove(sessionId);
      this.logger.info({ sessionId, tabs: woken.browser.pages?.tabs.length ?? 0 }, wake ? 'hibernated session woke on this worker' : 'session taken over on this worker');
    } else if (restore) {
      this.logger.info({ sessionId, url: snapshot?.url }, 'session restored on this worker');
    }
  }

  /**
   * A session waiting for a person lets its browser go: its storage, tabs, typed values,
   * scroll positions and the agent's conversation are sealed into the database, and the
   * browser closes (the worker's slot is free). Answers the sealed size in bytes.
   */
  async hibernate(sessionId: string, profile?: ProfileSource): Promise<{ bytes: number }> {
    const { hibernations } = this.deps;
    if (!hibernations) throw failureOf('INTERNAL_ERROR', 'This worker cannot hibernate sessions');
    // (the workflow never asks it of a session on a profile: its lock is held until the session ends)
    if (profile) throw failureOf('INTERNAL_ERROR', 'A session on a profile or environment keeps its browser while it waits');
    const browser = await this.deps.pool.hibernationState(sessionId);
    if (!browser) throw failureOf('INSTANCE_LOST', 'The browser of this session is no longer available');
    const bytes = await hibernations.save(sessionId, { browser, memory: this.deps.agent.saveMemory(sessionId) } satisfies Hibernated);
    await this.release(sessionId, { kind: 'hibernated' });
    this.logger.info({ sessionId, bytes, tabs: browser.pages?.tabs.length ?? 0 }, 'session hibernated: its browser is closed');
    return { bytes };
  }

  /** Closes the session's browser; a profile session's directory is archived back into its profile. */
  async close(sessionId: string, profile?: ProfileSource): Promise<void> {
    await this.release(sessionId, { kind: 'closed', profile });
  }

  /**
   * The one way a session leaves this worker: the agent forgets it, its browser closes, its
   * snapshot goes (a hibernation record holds all it did) and its files on disk. Closed for
   * good, its hibernation record goes too and a profile is archived back; left behind by a
   * workflow that is gone, whatever fails is let go, and its profile directory is discarded
   * unarchived (the stored profile stays as it was before the session).
   */
  private async release(sessionId: string, ending: Ending): Promise<void> {
    const { agent, pool, store, hibernations, onClosed, profiles } = this.deps;
    const quietly = <T>(work: Promise<T> | undefined) => (ending.kind === 'abandoned' ? work?.catch(() => undefined) : work);
    agent.forget(sessionId);
    this.contexts.forget(sessionId);
    await pool.close(sessionId);
    await this.snapshots.forget(sessionId);
    if (ending.kind !== 'handedOver') await quietly(store.snapshots.remove(sessionId));
    if (ending.kind === 'closed') await hibernations?.remove(sessionId);
    await quietly(onClosed?.(sessionId));
    if (ending.kind === 'closed' && ending.profile && profiles) await profiles.persist(ending.profile, sessionId);
    // (a session moving on restores its profile as stored, as after a lost worker)
    if (ending.kind === 'abandoned' || ending.kind === 'handedOver') await profiles?.discard?.(sessionId).catch(() => undefined);
  }

  /**
   * Holds the session for its whole life here, until the signal stops it: saves what a
   * restore on another worker needs. When the workflow is gone (terminated from outside, or
   * its history deleted) and no run that continued it as new holds a lease of its own,
   * nothing else would close the browser: it is released. A worker that is stopping hands
   * the session over (see handOverAll). Answers why the hold ended.
   */
  async hold(sessionId: string, signal: AbortSignal, workflowGone: () => boolean): Promise<HoldEnd> {
    this.leases.take(sessionId);
    const lease = this.handover.lease(sessionId, signal);
    try {
      // (opened while the worker began to stop: it moves on at once)
      if (this.handover.draining) void this.handOver(sessionId);
      const ended = await keepSnapshots(sessionId, { pool: this.deps.pool, snapshots: this.snapshots }, lease.signal);
      if (this.handover.handedOver(sessionId)) return 'handed_over';
      if (ended === 'cancelled' && workflowGone() && !(await this.leases.newer(sessionId))) {
        this.logger.warn({ sessionId }, 'session workflow gone; its browser is closed');
        await this.release(sessionId, { kind: 'abandoned' });
      }
      return ended;
    } finally {
      lease.end();
      this.leases.give(sessionId);
    }
  }

  /**
   * The worker stops: it takes no more sessions or steps, and hands over each session it
   * holds once its running step ended (waited for up to `graceMs`). Answers how many.
   */
  async handOverAll(graceMs: number): Promise<number> {
    this.handover.drain(graceMs);
    const ids = this.deps.pool.ids();
    await Promise.all(ids.map((id) => this.handOver(id)));
    return ids.length;
  }

  /**
   * Saves what the next worker needs (sealed like a hibernation: storage, tabs, typed values,
   * scroll positions and the agent's conversation; without a hibernation store, the page and
   * storage), lets the browser go and ends the session's lease as handed over.
   */
  private handOver(sessionId: string): Promise<void> {
    return this.handover.leave(sessionId, async () => {
      const since = Date.now();
      await this.handover.idle(sessionId, this.handover.graceMs);
      try {
        await this.saveForNextWorker(sessionId);
      } catch (err) {
        this.logger.warn({ sessionId, err: String(err) }, 'the handed over session keeps its last snapshot');
      }
      await this.release(sessionId, { kind: 'handedOver' }).catch((err) => this.logger.warn({ sessionId, err: String(err) }, 'browser not closed cleanly'));
      this.logger.info({ sessionId, ms: Date.now() - since }, 'session handed over');
    });
  }

  private async saveForNextWorker(sessionId: string): Promise<void> {
    const { pool, hibernations, agent } = this.deps;
    const browser = hibernations ? await pool.hibernationState(sessionId) : null;
    if (browser) await hibernations!.save(sessionId, { browser, memory: agent.saveMemory(sessionId) } satisfies Hibernated);
    else await this.snapshots.save(sessionId, true);
  }

  /** Stores the task's downloads and captured requests on its record; answers only counts. */
  async collect(sessionId: string, taskId: string): Promise<{ files: number; requests: number }> {
    // The task's recording (and its pictures) is complete before the task is.
    await this.deps.recorder?.settle(taskId);
    this.deps.recorder?.forget(taskId);
    const session = this.deps.pool.get(sessionId);
    if (!session) return { files: 0, requests: 0 };
    if (session.artifacts.taskId === taskId) session.artifacts.taskId = undefined;
    const collected = await session.artifacts.collect(taskId);
    // A page may carry a typed secret in an address (a form sent with GET): never recorded.
    const files = collected.files.map((f) => ({ ...f, source: this.mask(sessionId, f.source) }));
    const network = collected.network.map((n) => ({ ...n, url: this.mask(sessionId, n.url) }));
    try {
      await this.deps.store.tasks.saveArtifacts(taskId, { files, network: network.length ? [{ id: `net_${taskId}`, taskId, urls: network }] : [] });
    } catch (err) {
      // Not stored (a busy database): kept for the retry, which the workflow makes.
      session.artifacts.restore(taskId, collected);
      throw err;
    }
    return { files: files.length, requests: network.length };
  }

  /** A person's click, typing or key press on the session's page, announced and, during a task, recorded like the agent's actions. */
  async interact(req: { sessionId: string; action: InteractionAction; taskId?: string; userId?: string }): Promise<void> {
    const { sessionId, action, taskId, userId } = req;
    const { pool, vault, recorder } = this.deps;
    const session = pool.get(sessionId);
    if (!session) throw failureOf('INSTANCE_LOST', 'The browser of this session is no longer available');
    const { page } = session;
    session.changedAt = Date.now();
    const urlBefore = page.url();
    const facts = await manualStepFacts(page, action);
    // Typed by hand into a secret field: masked from now on wherever the session's data goes (the page may put it in an address).
    if (action.type === 'TYPE' && facts.args.secret) {
      vault?.maskAlso(sessionId, 'typed_by_hand', action.text);
      await vault?.flush(sessionId);
    }
    const done = await performManual(page, action);
    if (!done) return;
    await this.deps.events.message(sessionId, { type: 'action', data: { name: done.name, target: done.target } });
    if (!recorder || !taskId || !userId) return;
    const step = { by: 'human' as const, action: done.name, args: facts.args, element: facts.element, urlBefore, urlAfter: page.url(), outcome: 'ok' as const, summary: done.target };
    await recorder.add({ userId, sessionId, taskId }, maskedStep(step, (text) => this.mask(sessionId, text)));
  }

  /** One step of the agent (see runAgentStep); the task's context comes with its first step here (see StepRequest). */
  async step(request: StepRequest | StepInput, signal: AbortSignal): Promise<StepAnswer> {
    if (this.handover.draining) return this.refuseStep(request.sessionId, signal);
    return this.handover.step(request.sessionId, () => this.savedStep(request, signal));
  }

  /** One agent step; what it did to the session's pages is saved for a restore elsewhere before its answer goes back. */
  private async savedStep(request: StepRequest | StepInput, signal: AbortSignal): Promise<StepAnswer> {
    try {
      return await runAgentStep(this.stepDeps, this.contexts.inputOf(request), signal);
    } finally {
      await this.snapshots.save(request.sessionId);
    }
  }

  /** A step sent to a worker that is stopping is never run (its session moves on). */
  private async refuseStep(sessionId: string, signal: AbortSignal): Promise<never> {
    const outcome = await this.handover.refuseStep(sessionId, signal);
    if (outcome === 'cancelled') throw new StepFailure(undefined, 'The agent step was cancelled', undefined, { usage: { inputTokens: 0, outputTokens: 0 }, cost: 0 });
    throw failureOf('INSTANCE_LOST', 'This browser instance is stopping; the session moves to another one');
  }
}
