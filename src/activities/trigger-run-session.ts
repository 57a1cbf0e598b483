import { isServiceError, toTemporalFailure } from '../contracts/errors';
import type { ProfileSource } from '../contracts/profiles';
import type { OpenedRunSession, OpenRunSessionInput } from '../contracts/trigger-types';
import { sessionInput } from '../sessions/session-input';
import { triggerTaskParams } from '../sessions/task-checks';
import type { TriggerRunContext } from './trigger-run-context';

/**
 * Admits the run's session as the API admits one (src/store/session-admission.ts): a
 * session slot of the owner, the environment's profile lock and the session record.
 * Answers the session's input, built as the API builds one (src/sessions/): its one task
 * ends the session. A retry after success answers the same input. A refusal is a non-retryable failure of its catalogue code.
 */
export async function openRunSession(ctx: TriggerRunContext, { runId, trigger, sessionId, taskId }: OpenRunSessionInput): Promise<OpenedRunSession> {
  const { config } = ctx;
  const profile: ProfileSource = { kind: 'environment', id: trigger.environmentId, userId: trigger.userId };
  const input = sessionInput(config, {
    sessionId,
    userId: trigger.userId,
    profile,
    ...(trigger.policyId ? { policyId: trigger.policyId } : {}),
    initialTask: { taskId, params: triggerTaskParams(trigger) },
    singleTask: true,
  });
  const opened = { input, taskQueue: config.TEMPORAL_TASK_QUEUE };
  if (await ctx.store.sessions.get(sessionId)) return opened;
  try {
    await ctx.admission.admit({ userId: trigger.userId, profile, sessionId });
  } catch (err) {
    throw refusal(err, profile);
  }
  await ctx.runs.setSession(runId, sessionId, taskId);
  ctx.logger.info({ triggerId: trigger.triggerId, runId, sessionId }, 'trigger run session opened');
  return opened;
}

/** A refused admission as the run's failure: a service error becomes a non-retryable failure of its code; anything else stays as it is. */
function refusal(err: unknown, profile: ProfileSource): unknown {
  if (!isServiceError(err)) return err;
  const message = err.code === 'USER_NOT_FOUND' ? 'The owner of this trigger no longer exists' : err.message;
  return toTemporalFailure(err, { message, details: { ...err.details, ...(err.code === 'SESSION_LIMIT_REACHED' ? {} : { environmentId: profile.id }) }, retry: false });
}

export interface AbandonRunSessionInput {
  sessionId: string;
  userId: string;
  environmentId: string;
}

/** The session workflow could not be started: what openRunSession took is given back. */
export async function abandonRunSession(ctx: TriggerRunContext, { sessionId, userId, environmentId }: AbandonRunSessionInput): Promise<void> {
  await ctx.admission.abandon({ sessionId, userId, profile: { kind: 'environment', id: environmentId, userId } });
}
