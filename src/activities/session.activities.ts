import type { Config } from '../config';
import type { EventPublisher } from '../events/publisher';
import { atMost } from '../at-most';
import { ProfileLocks } from '../store/profile-locks';
import { removeSavedState } from '../store/saved-state';
import { wireFiles } from '../files/links';
import type { ProfileSource } from '../contracts/profiles';
import { TIMELINE_KEPT_AFTER_END_MS, type ConnectionEvent, type SessionMessage } from '../contracts/events';
import type { Logger } from '../logger';
import type { Store } from '../store/store';
import type { WorkerRegistry } from '../store/worker-registry';
import type { EndReason, SessionStatus, TaskView } from '../contracts/session-types';
import { TERMINAL_TASK_STATUSES } from '../contracts/session-types';
import { workerMetrics } from '../metrics/worker-metrics';

/**
 * The browser worker in this process, when there is one (ROLE=worker and ROLE=all): a
 * session placed on it gets its browser opened right where its workflow's first task runs.
 */
export interface LocalBrowserWorker {
  workerId: string;
  taskQueue: string;
  /**
   * Sessions held now (live, not the registry's last heartbeat), the capacity, and the ids of
   * the sessions counted or had since the last heartbeat (their placements are in `sessions`, or over).
   */
  load(): { sessions: number; capacity: number; known: string[] };
  /**
   * Hands a plain session (no profile, proxy or restore) one of this process's ready
   * contexts; false when none is ready. Never waits for Chromium: it runs inside a workflow task.
   */
  openReady(sessionId: string, userId: string): boolean;
  /**
   * Counts a session placed here in `load()` until its browser is being opened here, it is
   * closed, or `ms` passed (the open never came).
   */
  reserve(sessionId: string, ms: number): void;
}

/** How long a session placed on this process counts in its load while its browser is not being opened yet (its activity's schedule-to-start). */
const PLACED_COUNTS_MS = 15_000;
/** How long a placement waits for the one before it in this process. */
const PLACING_WAIT_MS = 2_000;
/**
 * How long a session's first placement that finds no worker with room asks the registry
 * again (every ROOM_POLL_MS) before it answers none: a worker whose heartbeat came late under
 * load, or a session ending meanwhile. A session started with a slot free on two workers was
 * failed at once on a loaded machine.
 */
const ROOM_WAIT_MS = 4_000;
const ROOM_POLL_MS = 500;

export interface Placement {
  workerId: string;
  taskQueue: string;
  /** The browser is already open there (the worker was this process). */
  opened?: boolean;
}

type SessionActivityDeps = { config: Config; store: Store; registry: WorkerRegistry; events: EventPublisher; logger: Logger; local?: LocalBrowserWorker };

/** Activities any worker may run (the shared queue): placement and records. */
export function createSessionActivities(deps: SessionActivityDeps) {
  const logger = deps.logger.child({ component: 'session-activities' });
  return { ...placementActivities(deps.registry, logger, deps.local), ...recordActivities({ ...deps, logger }) };
}

/** Picking the browser worker of a session (see placeSession). */
function placementActivities(registry: WorkerRegistry, logger: Logger, local?: LocalBrowserWorker) {
  let placing: Promise<unknown> = Promise.resolve();
  /** Runs after the placement before it, waited for at most PLACING_WAIT_MS (a registry that hangs holds no one for long). */
  const inTurn = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = atMost(placing, PLACING_WAIT_MS).then(fn);
    placing = run;
    return run;
  };
  return {
    async assignWorker({ sessionId, exclude }: { sessionId: string; exclude: string[] }): Promise<{ workerId: string; taskQueue: string } | null> {
      const worker = await registry.place(sessionId, exclude);
      logger.info({ sessionId, workerId: worker?.workerId }, worker ? 'browser worker assigned' : 'no browser worker available');
      return worker ? { workerId: worker.workerId, taskQueue: worker.taskQueue } : null;
    },

    /**
     * Picks the browser worker with the most free room, this process's own on a tie (its
     * load is read live), and when it is this process, the session is plain (`open`) and a
     * ready context is there, hands it over: run as a local activity, the session's browser
     * is ready at the end of its workflow's first task, with no activity dispatched through
     * the server. Anything slower (a context to make, a failure to report) is left to the
     * browser activity on the worker's queue.
     */
    async placeSession({ sessionId, exclude, open }: { sessionId: string; exclude: string[]; open?: { userId: string } }): Promise<Placement | null> {
      const self = local && !exclude.includes(local.workerId) ? local : undefined;
      // One placement at a time in this process: each sees the ones before it (a burst of starts spreads).
      const pickInTurn = () => inTurn(() => pick(registry, sessionId, exclude, self));
      let { chosen, hereFits } = await pickInTurn();
      // (a session's first placement, or its wake: one moving from a lost worker has its own retries within its grace period)
      for (const until = Date.now() + (exclude.length ? 0 : ROOM_WAIT_MS); !chosen && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, ROOM_POLL_MS));
        ({ chosen, hereFits } = await pickInTurn());
      }
      if (!chosen) {
        logger.warn({ sessionId, exclude }, 'no browser worker available');
        return null;
      }
      if (hereFits && open && openHere(self!, sessionId, open.userId, logger)) return { ...chosen, opened: true };
      logger.info({ sessionId, workerId: chosen.workerId }, 'browser worker assigned');
      return chosen;
    },
  };
}

/** Picks a worker and notes the placement; a pick of this process's own worker counts in its load until its browser is being opened. */
async function pick(registry: WorkerRegistry, sessionId: string, exclude: string[], self?: LocalBrowserWorker): Promise<{ chosen: { workerId: string; taskQueue: string } | null; hereFits: boolean }> {
  // This process's own entry in the registry may be a heartbeat old: it is compared by its
  // live load (sessions placed here whose browser is not open yet included).
  const here = self && { workerId: self.workerId, taskQueue: self.taskQueue, ...self.load() };
  // Picked and noted in one step, so other processes placing at the same moment see it.
  const chosen = await registry.place(sessionId, exclude, here);
  const hereFits = !!self && chosen?.workerId === self.workerId;
  // Counted here until its browser is being opened (at once when a ready context is handed over below).
  if (hereFits) self!.reserve(sessionId, PLACED_COUNTS_MS);
  return { chosen, hereFits };
}

/** Hands the session one of this process's ready contexts; false when none is ready. */
function openHere(self: LocalBrowserWorker, sessionId: string, userId: string, logger: Logger): boolean {
  const t0 = performance.now();
  try {
    if (self.openReady(sessionId, userId)) {
      logger.info({ sessionId, workerId: self.workerId, openMs: Math.round(performance.now() - t0) }, 'browser worker assigned; browser opened in place');
      return true;
    }
  } catch (err) {
    logger.warn({ sessionId, err: String(err) }, 'browser not opened in place; the worker opens it');
  }
  return false;
}

/** The session's record, its tasks and its events. */
function recordActivities(deps: Omit<SessionActivityDeps, 'registry' | 'local'>) {
  const { config, store, events, logger } = deps;
  const locks = new ProfileLocks(store.db);
  return {
    async markSession({ sessionId, status, workerId }: { sessionId: string; status: SessionStatus; workerId?: string }): Promise<void> {
      await store.sessions.markStatus(sessionId, status, workerId);
    },

    async saveTask({ userId, task }: { userId: string; task: TaskView }): Promise<void> {
      await store.tasks.save(userId, task);
    },

    async publish({ sessionId, message }: { sessionId: string; message: SessionMessage }): Promise<void> {
      await events.message(sessionId, message);
    },

    async publishConnection({ sessionId, event }: { sessionId: string; event: ConnectionEvent }): Promise<void> {
      await events.connection(sessionId, event);
    },

    /** Records the task's end and charges its cost exactly once. */
    async completeTask({ userId, task }: { userId: string; task: TaskView }): Promise<{ balance: number | null }> {
      if (!TERMINAL_TASK_STATUSES.includes(task.status)) throw new Error(`task ${task.taskId} is not finished`);
      const { balance, charged } = await store.users.chargeTask(userId, task.taskId, task.usage.cost);
      workerMetrics.taskEnded(task, charged);
      // The event first, the record last: the API answers an end once the record holds it
      // (read your writes), and by then the timeline has the end too.
      const stored = task.status === 'task_completed' ? await store.tasks.get(task.sessionId, task.taskId) : null;
      await events.message(task.sessionId, completionEvent(config, { ...task, files: stored?.files, network: stored?.network }));
      await store.tasks.save(userId, task);
      logger.info({ sessionId: task.sessionId, taskId: task.taskId, status: task.status, cost: task.usage.cost, charged }, 'task finished');
      return { balance };
    },

    async endSession({ sessionId, userId, status, reason, profile }: { sessionId: string; userId: string; status: SessionStatus; reason: EndReason; profile?: ProfileSource }): Promise<void> {
      // Whatever ended it (its worker gone included), nothing it saved to come back elsewhere
      // stays: gone before the end is recorded, so a session seen ended has none left.
      await removeSavedState(store.db, sessionId);
      const released = await store.sessions.end(sessionId, status, reason);
      if (profile) await locks.release(profile, sessionId);
      if (released) await store.users.releaseSessionSlot(userId);
      await events.connection(sessionId, { event: 'end_session', reason });
      await store.events.markExpiry(sessionId, new Date(Date.now() + TIMELINE_KEPT_AFTER_END_MS));
      logger.info({ sessionId, status, reason }, 'session ended');
    },
  };
}

function completionEvent(config: Config, task: TaskView): SessionMessage {
  switch (task.status) {
    case 'task_completed':
      return { type: 'task_completed', sessionId: task.sessionId, taskId: task.taskId, data: { message: task.message ?? '', files: wireFiles(config, task.files), network: task.network ?? [] }, usage: { ...task.usage } };
    case 'failed':
      return { type: 'error', taskId: task.taskId, error: task.error ?? 'Task failed', code: task.code ?? 'TASK_FAILED', ...(task.details ? { details: task.details } : {}) };
    default:
      return { type: 'response_update', taskId: task.taskId, data: { message: 'Task stopped' } };
  }
}

export type SessionActivities = ReturnType<typeof createSessionActivities>;
