import { WorkflowUpdateFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import { ServiceError, isErrorCode } from '../contracts/errors';

export const instanceUnavailable = () => new ServiceError('INSTANCE_UNAVAILABLE', "The session's browser instance is unavailable; it is being restored on another instance, try again shortly");

/**
 * The service error a failed update of the session workflow stands for: its validator's
 * or handler's rejection (a code of the catalogue), or INSTANCE_UNAVAILABLE when the
 * activity on the session's browser worker failed because the worker is gone.
 */
export function updateRejection(err: unknown): ServiceError | null {
  if (!(err instanceof WorkflowUpdateFailedError)) return null;
  const cause = err.cause;
  if (cause instanceof ApplicationFailure) {
    const code = isErrorCode(cause.type) ? cause.type : 'INVALID_STATE';
    const details = cause.details?.[0] as Record<string, unknown> | undefined;
    if (code === 'INSTANCE_LOST') return instanceUnavailable();
    return new ServiceError(code, cause.message, details);
  }
  if (cause instanceof ActivityFailure) {
    const inner = cause.cause;
    if (inner instanceof TimeoutFailure || (inner instanceof ApplicationFailure && inner.type === 'INSTANCE_LOST')) return instanceUnavailable();
  }
  return null;
}

/** The workflow is closed (or was never there): Temporal answers NOT_FOUND to updates of a closed workflow. */
export function isClosedWorkflow(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError;
}
