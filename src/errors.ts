/**
 * One error hierarchy for the whole service. Each error knows its wire `code`, its HTTP
 * status and whether retrying the same operation could succeed. The API's error
 * middleware turns it into the documented envelope; activities turn it into a Temporal
 * ApplicationFailure (type = code, nonRetryable = !retryable).
 */
export class ServiceError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
    readonly details?: Record<string, unknown>,
    readonly retryable = false,
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
  constructor(message = 'API key required', code = 'UNAUTHORIZED') {
    super(code, message, 401);
  }
}
export class ForbiddenError extends ServiceError {
  constructor(message = 'Account is deactivated') {
    super('ACCOUNT_DEACTIVATED', message, 403);
  }
}
export class NotFoundError extends ServiceError {
  constructor(code: string, message: string) {
    super(code, message, 404);
  }
}
export class InsufficientBalanceError extends ServiceError {
  constructor(balance: number, required: number) {
    super('INSUFFICIENT_BALANCE', 'Insufficient balance', 402, { balance, required });
  }
}
export class SessionLimitError extends ServiceError {
  constructor(current: number, limit: number) {
    super('SESSION_LIMIT_REACHED', `Concurrent session limit reached (${current}/${limit})`, 429, { current, limit });
  }
}
export class NoInstancesError extends ServiceError {
  constructor() {
    super('NO_INSTANCES_AVAILABLE', 'No browser instances available', 503, undefined, true);
  }
}
export class TaskAlreadyRunningError extends ServiceError {
  constructor(taskId: string) {
    super('TASK_ALREADY_RUNNING', 'A task is already running in this session', 409, { taskId });
  }
}
export class RateLimitError extends ServiceError {
  constructor(message = 'Too many requests, please try again later.') {
    super('RATE_LIMIT_EXCEEDED', message, 429);
  }
}

/** Failures of the browser or the model during a task; they end the task with their code. */
export class TaskFailure extends ServiceError {
  constructor(code: string, message: string, details?: Record<string, unknown>, retryable = false) {
    super(code, message, 500, details, retryable);
  }
}

export const isServiceError = (e: unknown): e is ServiceError => e instanceof ServiceError;
