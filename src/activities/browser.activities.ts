import { CancelledFailure, Context } from '@temporalio/activity';
import { toTemporalFailure } from '../contracts/errors';
import type { ProfileSource } from '../contracts/profiles';
import type { InteractionAction, StepInput, StepRequest } from '../contracts/session-types';
import { StepFailure, type StepAnswer } from '../held-sessions/agent-step';
import type { HeldSessions, OpenRequest } from '../held-sessions/held-sessions';

/** Heartbeats often enough that a stop reaches the step within a second (a step shorter than this sends none). */
const HEARTBEAT_EVERY_MS = 500;
/**
 * The lease heartbeat: the workflow notices a dead worker after its heartbeat timeout (12 s),
 * so a beat every 3 s leaves room for three late ones; each beat is a write on the server,
 * for every open session.
 */
const LEASE_BEAT_MS = 3000;

/** Activities on one browser worker's own task queue: Temporal's doors onto the sessions it holds. */
export function createBrowserActivities(held: HeldSessions) {
  return { ...browserDoors(held), holdBrowser: holdBrowser(held), agentStep: agentStep(held) };
}

/** The doors that pass straight through to the held sessions. */
function browserDoors(held: HeldSessions) {
  return {
    /** Opens the session's browser here (restored from another worker, or woken from hibernation). */
    async openBrowser(req: OpenRequest): Promise<void> {
      await held.open(req);
    },

    /** Seals a session that waits for a person and closes its browser; answers the sealed size in bytes. */
    async hibernateBrowser({ sessionId, profile }: { sessionId: string; profile?: ProfileSource }): Promise<{ bytes: number }> {
      return held.hibernate(sessionId, profile);
    },

    /** Closes the session's browser; a profile session's directory is archived back into its profile. */
    async closeBrowser({ sessionId, profile }: { sessionId: string; profile?: ProfileSource }): Promise<void> {
      await held.close(sessionId, profile);
    },

    /** Stores the task's downloads and requests with its record; answers only counts (history stays small). */
    async collectArtifacts({ sessionId, taskId }: { sessionId: string; taskId: string }): Promise<{ files: number; requests: number }> {
      return held.collect(sessionId, taskId);
    },

    /** A human's click, typing or key press on the session's page (page coordinates). */
    async interact(req: { sessionId: string; action: InteractionAction; taskId?: string; userId?: string }): Promise<void> {
      await held.interact(req);
    },
  };
}

/**
 * Runs for the session's whole life on the worker that holds its browser. Its heartbeat
 * is how the workflow learns the worker died; meanwhile the worker saves what a restore
 * on another worker needs. A worker that stops ends it with 'handed_over': the session's
 * state is saved and its workflow moves it to another worker at once.
 */
function holdBrowser(held: HeldSessions) {
  return async ({ sessionId }: { sessionId: string }): Promise<'handed_over' | undefined> => {
    const ctx = Context.current();
    // The heartbeat has its own timer: a snapshot that is slow on a busy worker (many sessions
    // at once) must not make the workflow think the worker is gone.
    const heart = setInterval(() => {
      if (held.has(sessionId)) ctx.heartbeat();
    }, LEASE_BEAT_MS);
    ctx.heartbeat();
    try {
      const ended = await held.hold(sessionId, ctx.cancellationSignal, () => ctx.cancellationDetails?.notFound === true);
      if (ended === 'handed_over') return ended;
      if (ended === 'cancelled') await ctx.cancelled; // rethrows the cancellation, so Temporal records it as such
      return undefined;
    } finally {
      clearInterval(heart);
    }
  };
}

/** One step of the agent, heartbeating so that a stop or pause cancels it within a second. */
function agentStep(held: HeldSessions) {
  return async (request: StepRequest | StepInput): Promise<StepAnswer> => {
    const ctx = Context.current();
    const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
    try {
      return await held.step(request, ctx.cancellationSignal);
    } catch (err) {
      throw asTemporalFailure(err);
    } finally {
      clearInterval(timer);
    }
  };
}

export type BrowserActivities = ReturnType<typeof createBrowserActivities>;

/** A stopped step is a cancellation carrying what it spent; a failed one a failure of its code, masked. */
function asTemporalFailure(err: unknown): unknown {
  if (!(err instanceof StepFailure)) return err;
  if (err.cancelled) return new CancelledFailure(err.message, [err.cancelled]);
  return toTemporalFailure(err.error, { message: err.message, details: err.details });
}
