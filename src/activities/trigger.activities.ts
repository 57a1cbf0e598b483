import type { OpenedRunSession, OpenRunSessionInput, SettledRun, SettleRunInput, BeginRunResult } from '../contracts/trigger-types';
import { newSessionIds } from '../store/session-admission';
import { beginTriggerRun, type BeginRunInput } from './trigger-run-begin';
import { triggerRunContext, type TriggerActivitiesDeps } from './trigger-run-context';
import { abandonRunSession, openRunSession, type AbandonRunSessionInput } from './trigger-run-session';
import { settleTriggerRun } from './trigger-run-settle';

export { BUDGET_ENDS_TO_PAUSE, runOutcome, type RunOutcome } from './trigger-run-settle';

/**
 * Activities of trigger runs (shared queue): the run record, the overlap lock, the
 * session the run opens (slot, environment lock and record, as the API does before it
 * starts a session workflow), failure counting and the auto-pause. The Temporal client is
 * the worker's own (from the activity context) unless one is passed in.
 */
export function createTriggerActivities(deps: TriggerActivitiesDeps) {
  const ctx = triggerRunContext(deps);
  return {
    /** Begins an attempt: the overlap lock, the run record, the trigger and the owner's standing (./trigger-run-begin.ts). */
    async beginTriggerRun(input: BeginRunInput): Promise<BeginRunResult> {
      return beginTriggerRun(ctx, input);
    },

    /** The ids of the session a run opens: the same 128-bit random source as every session. */
    async newRunSessionIds(): Promise<{ sessionId: string; taskId: string }> {
      return newSessionIds();
    },

    /** Admits the run's session as the API admits one and answers its input (./trigger-run-session.ts). */
    async openRunSession(input: OpenRunSessionInput): Promise<OpenedRunSession> {
      return openRunSession(ctx, input);
    },

    /** The session workflow could not be started: what openRunSession took is given back. */
    async abandonRunSession(input: AbandonRunSessionInput): Promise<void> {
      return abandonRunSession(ctx, input);
    },

    /** Ends an attempt: records its outcome, counts failures, releases the lock, answers the deliveries (./trigger-run-settle.ts). */
    async settleTriggerRun(input: SettleRunInput): Promise<SettledRun> {
      return settleTriggerRun(ctx, input);
    },
  };
}

export type TriggerActivities = ReturnType<typeof createTriggerActivities>;
