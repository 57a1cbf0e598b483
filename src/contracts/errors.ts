import { ApplicationFailure } from '@temporalio/common';
import { canRetryNow, statusOf, type ErrorCode } from './error-codes';

export { ERROR_CATALOGUE, canRetryLater, canRetryNow, endsTaskAtOnce, isErrorCode, retryOf, statusOf, type ErrorCode } from './error-codes';

/**
 * One error hierarchy for the whole service. Each error carries a wire `code` of the
 * catalogue (src/error-codes.ts), which gives its HTTP status and whether retrying the
 * same operation could succeed unless the error says otherwise. The API's error
 * middleware turns it into the documented envelope; activities turn it into a Temporal
 * ApplicationFailure (type = code, nonRetryable = !retryable).
 */
export class ServiceError extends Error {
  /** The HTTP status of the code, from the catalogue. */
  readonly status: number;
  /** Whether the same call may succeed after a short backoff, from the catalogue. */
  readonly retryable: boolean;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
    this.status = statusOf(code);
    this.retryable = canRetryNow(code);
  }

  toBody(): Record<string, unknown> {
    return { success: false, error: this.message, message: this.message, code: this.code, ...(this.details ? { details: this.details } : {}) };
  }
}

export class InvalidParamsError extends ServiceError {
  constructor(message = 'Invalid request parameters', details?: Record<string, unknown>) {
    super('INVALID_PARAMS', message, details);
  }
}
export class MissingFieldError extends ServiceError {
  constructor(field: string, message = `${field} is required`) {
    super('MISSING_REQUIRED_FIELD', message, { field });
  }
}
export class InvalidParameterError extends ServiceError {
  constructor(parameter: string, value: unknown, message: string, bounds: { min?: number; max?: number } = {}) {
    super('INVALID_PARAMETER', message, { parameter, value, ...bounds });
  }
}
export class UnauthorizedError extends ServiceError {
  constructor(message = 'API key required', code: 'UNAUTHORIZED' | 'INVALID_API_KEY' | 'API_KEY_EXPIRED' = 'UNAUTHORIZED') {
    super(code, message);
  }
}
export class ForbiddenError extends ServiceError {
  constructor(message = 'Account is deactivated') {
    super('ACCOUNT_DEACTIVATED', message);
  }
}
export class NotFoundError extends ServiceError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
  }
}
export class InsufficientBalanceError extends ServiceError {
  constructor(balance: number, required: number) {
    super('INSUFFICIENT_BALANCE', 'Insufficient balance', { balance, required });
  }
}
export class SessionLimitError extends ServiceError {
  constructor(current: number, limit: number) {
    super('SESSION_LIMIT_REACHED', `Concurrent session limit reached (${current}/${limit})`, { current, limit });
  }
}
export class NoInstancesError extends ServiceError {
  constructor() {
    super('NO_INSTANCES_AVAILABLE', 'No browser instances available');
  }
}
export class TaskAlreadyRunningError extends ServiceError {
  constructor(taskId: string) {
    super('TASK_ALREADY_RUNNING', 'A task is already running in this session', { taskId });
  }
}
export class RateLimitError extends ServiceError {
  constructor(message = 'Too many requests, please try again later.') {
    super('RATE_LIMIT_EXCEEDED', message);
  }
}

/** Failures of the browser or the model during a task; they end the task with their code. */
export class TaskFailure extends ServiceError {}

export const isServiceError = (e: unknown): e is ServiceError => e instanceof ServiceError;

/**
 * The one way an error becomes a Temporal failure (activities and workflows alike): the
 * failure's type is the error's code, and Temporal retries it only when the catalogue says
 * another try soon may succeed. `overrides` replace the message or details (masked copies),
 * or forbid retries where the workflow decides what happens next. Anything that is not a
 * ServiceError becomes `fallback` (TASK_FAILED unless told otherwise).
 */
export function toTemporalFailure(err: unknown, overrides: { message?: string; details?: Record<string, unknown>; retry?: false; fallback?: ErrorCode } = {}): ApplicationFailure {
  if (err instanceof ApplicationFailure && !overrides.message && !overrides.details && overrides.retry === undefined) return err;
  const code: string = isServiceError(err) ? err.code : (overrides.fallback ?? 'TASK_FAILED');
  const message = overrides.message ?? (err instanceof Error ? err.message : String(err));
  const details = overrides.details ?? (isServiceError(err) ? err.details : undefined);
  return ApplicationFailure.create({ type: code, message, nonRetryable: overrides.retry === false || !canRetryNow(code), details: details ? [details] : undefined });
}

/** A Temporal failure of a catalogue code, for code that has no error object to convert. */
export function failureOf(code: ErrorCode, message: string, details?: Record<string, unknown>, nextRetryDelay?: number): ApplicationFailure {
  return ApplicationFailure.create({ type: code, message, nonRetryable: !canRetryNow(code), details: details ? [details] : undefined, nextRetryDelay });
}
