/**
 * How the workflows read the failures of their activities: what the failure says, and what
 * it carries in its details (checked, not assumed). Deterministic: Temporal types only.
 */
import * as wf from '@temporalio/workflow';
import type { CancelledStep } from '../contracts/session-types';

export interface FailureDescription {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** An activity's application failure (the activity threw it, or Temporal made it of the activity's error). */
export function applicationFailureOf(err: unknown): wf.ApplicationFailure | undefined {
  return err instanceof wf.ActivityFailure && err.cause instanceof wf.ApplicationFailure ? err.cause : undefined;
}

/** The type of an activity's application failure (SECRETS_UNAVAILABLE, TASK_CONTEXT_UNAVAILABLE, ...). */
export function failureType(err: unknown): string | undefined {
  return applicationFailureOf(err)?.type ?? undefined;
}

/** A step or the lease failed because the worker holding the browser is gone. */
export function isWorkerLoss(err: unknown): boolean {
  if (!(err instanceof wf.ActivityFailure)) return false;
  if (err.cause instanceof wf.TimeoutFailure) return true;
  return err.cause instanceof wf.ApplicationFailure && err.cause.type === 'INSTANCE_LOST';
}

/** The first detail of a failure, when it is a plain object (the service's failures carry one). */
export function detailsOf(failure: wf.ApplicationFailure | wf.CancelledFailure): Record<string, unknown> | undefined {
  const first: unknown = failure.details?.[0];
  return isRecord(first) ? first : undefined;
}

/** The tokens a cancelled step used, as its activity reported them with the cancellation. */
export function cancelledStep(err: unknown): CancelledStep | undefined {
  const cause = err instanceof wf.ActivityFailure ? err.cause : undefined;
  if (!(cause instanceof wf.CancelledFailure)) return undefined;
  const spent = detailsOf(cause);
  if (!spent || !isRecord(spent.usage)) return undefined;
  const { inputTokens, outputTokens } = spent.usage;
  const cost = spent.cost;
  if (typeof inputTokens !== 'number' || typeof outputTokens !== 'number' || typeof cost !== 'number') return undefined;
  return { usage: { inputTokens, outputTokens }, cost, ...(typeof spent.said === 'string' ? { said: spent.said } : {}) };
}

/** What a task's record says of the failure that ended it. */
export function describeFailure(err: unknown): FailureDescription {
  const failure = err instanceof wf.ActivityFailure ? err.cause : err;
  if (failure instanceof wf.ApplicationFailure) return { code: failure.type ?? 'TASK_FAILED', message: failure.message, details: detailsOf(failure) };
  if (failure instanceof wf.TimeoutFailure) return { code: 'INSTANCE_LOST', message: 'The browser instance stopped responding' };
  return { code: 'TASK_FAILED', message: failure instanceof Error ? failure.message : String(err) };
}

/** The task's end when its browser's worker was lost and no other worker restored the session. */
export function lostInstance(): wf.ApplicationFailure {
  return wf.ApplicationFailure.create({ type: 'INSTANCE_LOST', message: 'The browser instance was lost and could not be restored', nonRetryable: true });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
