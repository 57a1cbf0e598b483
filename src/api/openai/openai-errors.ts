import type { OpenAiError } from '../../contracts/schemas/chat.schema';
import { isServiceError, ServiceError } from '../../contracts/errors';

/** OpenAI error types by HTTP status; the SDKs turn each status into their own error class. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  422: 'task_error',
  429: 'rate_limit_error',
  503: 'service_unavailable_error',
};

/** An error of the OpenAI-compatible endpoints: its HTTP status and the `{error:{message,type,code}}` body. */
export class OpenAiCompatError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'OpenAiCompatError';
  }

  toBody(): OpenAiError {
    return { error: { message: this.message, type: this.type, code: this.code } };
  }
}

export const modelNotFound = (model: string) =>
  new OpenAiCompatError(400, `The model '${model}' does not exist; the only model is 'service-browser-1'`, 'invalid_request_error', 'model_not_found');

export const guardrailTriggered = (value: string) =>
  new OpenAiCompatError(422, `A guardrail was triggered: ${value}`, 'guardrail_error', 'guardrail_triggered');

/** Any error of the service (auth, balance, limits, instances, validation) in the OpenAI shape. */
export function toOpenAiError(err: unknown): OpenAiCompatError {
  if (err instanceof OpenAiCompatError) return err;
  const e: ServiceError = isServiceError(err) ? err : new ServiceError('INTERNAL_ERROR', 'Internal server error');
  const type = TYPE_BY_STATUS[e.status] ?? (e.status >= 500 ? 'server_error' : 'invalid_request_error');
  return new OpenAiCompatError(e.status, e.message, type, e.code.toLowerCase());
}
