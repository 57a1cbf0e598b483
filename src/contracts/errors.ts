import { canRetryNow, statusOf, type ErrorCode } from './error-codes';

export { ERROR_CATALOGUE, canRetryLater, canRetryNow, isErrorCode, retryOf, statusOf, type ErrorCode } from './error-codes';

/**
 * One error hierarchy for the whole service. Each error carries a wire `code` of the
 * catalogue (src/error-codes.ts), which gives its HTTP status and whether retrying the
 * same operation could succeed unless the error says otherwise. The API's error
 * middleware turns it into the documented envelope; activities turn it into a Temporal
 * ApplicationFailure (type = code, nonRetryable = !retryable).
 */
export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly status = statusOf(code),
    readonly details?: Record<string, unknown>,
    readonly retryable = canRetryNow(code),
  ) {
    super(message);
    this.name = new.target.name;
  }

  toBody(): Record<string, unknown> {
    return { success: false, error: this.message, message: this.message, code: this.code, ...(this.details ? { details: this.details } : {}) };
  }
}

export class InvalidParamsError extends ServiceError {
  constructor(message = 'Invalid request parameters', details?: Record<string, unknown>) {
    super('INVALID_PARAMS', message, 400, details);
  }
}
export class MissingFieldError extends ServiceError {
  constructor(field: string, message = `${field} is required`) {
    super('MISSING_REQUIRED_FIELD', message, 400, { field });
  }
}
export class InvalidParameterError extends ServiceError {
  constructor(parameter: string, value: unknown, message: string, bounds: { min?: number; max?: number } = {}) {
    super('INVALID_PARAMETER', message, 400, { parameter, value, ...bounds });
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
    super('INSUFFICIENT_BALANCE', 'Insufficient balance', undefined, { balance, required });
  }
}
export class SessionLimitError extends ServiceError {
  constructor(current: number, limit: number) {
    super('SESSION_LIMIT_REACHED', `Concurrent session limit reached (${current}/${limit})`, undefined, { current, limit });
  }
}
export class NoInstancesError extends ServiceError {
  constructor() {
    super('NO_INSTANCES_AVAILABLE', 'No browser instances available');
  }
}
export class TaskAlreadyRunningError extends ServiceError {
  constructor(taskId: string) {
    super('TASK_ALREADY_RUNNING', 'A task is already running in this session', undefined, { taskId });
  }
}
export class RateLimitError extends ServiceError {
  constructor(message = 'Too many requests, please try again later.') {
    super('RATE_LIMIT_EXCEEDED', message);
  }
}

/** Failures of the browser or the model during a task; they end the task with their code. */
export class TaskFailure extends ServiceError {
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, retryable = canRetryNow(code)) {
    super(code, message, undefined, details, retryable);
  }
}

export const isServiceError = (e: unknown): e is ServiceError => e instanceof ServiceError;
