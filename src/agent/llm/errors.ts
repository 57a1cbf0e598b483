import Anthropic, { APIError as AnthropicApiError } from '@anthropic-ai/sdk';
import OpenAI, { APIError as OpenAiApiError } from 'openai';
import { TaskFailure } from '../../contracts/errors';

export type LlmProvider = 'openai' | 'anthropic';

/** Thrown when the caller's signal cancels a model request; recognise it with isAbortError. */
export class LlmAbortError extends Error {
  override readonly name = 'AbortError';
  constructor(cause?: unknown) {
    super('The model request was aborted', { cause });
  }
}

export function isAbortError(err: unknown): boolean {
  if (err instanceof LlmAbortError || err instanceof OpenAI.APIUserAbortError || err instanceof Anthropic.APIUserAbortError) return true;
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'AbortError';
}

export interface FailureContext {
  provider: LlmProvider;
  apiKey: string;
  baseURL?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

const MAX_PROVIDER_MESSAGE = 300;

/**
 * Providers echo (parts of) keys in their messages, e.g. OpenAI's "Incorrect API key
 * provided: sk-proj-****abcd"; task errors reach users and logs, so keys never pass.
 */
export function redactSecrets(text: string, apiKey: string): string {
  let out = text;
  if (apiKey.length >= 4) out = out.split(apiKey).join('[redacted]');
  return out.replace(/\bsk-[A-Za-z0-9_*-]{6,}/g, '[redacted]').replace(/\b(Bearer)\s+\S+/gi, '$1 [redacted]');
}

/** Maps anything a provider SDK throws to a TaskFailure with a stable code, or to an LlmAbortError. */
export function toLlmFailure(err: unknown, ctx: FailureContext): Error {
  if (ctx.signal?.aborted || isAbortError(err)) return new LlmAbortError(ctx.signal?.reason ?? err);
  if (err instanceof TaskFailure) return err;

  const details: Record<string, unknown> = { provider: ctx.provider };
  if (err instanceof OpenAI.APIConnectionTimeoutError || err instanceof Anthropic.APIConnectionTimeoutError) {
    return new TaskFailure('LLM_UNAVAILABLE', `The model provider did not answer within ${ctx.timeoutMs} ms`, details);
  }
  if (err instanceof OpenAI.APIConnectionError || err instanceof Anthropic.APIConnectionError) {
    const reason = connectionReason(err);
    return new TaskFailure('LLM_UNAVAILABLE', `The model provider${endpoint(ctx.baseURL)} is unreachable${reason ? ` (${reason})` : ''}`, details);
  }
  if ((err instanceof OpenAiApiError || err instanceof AnthropicApiError) && typeof err.status === 'number') {
    return failureForStatus(err.status, providerMessage(err), providerCode(err), ctx);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new TaskFailure('LLM_REQUEST_FAILED', `The model request failed: ${clean(message, ctx.apiKey)}`, details);
}

/** Also used for error objects some gateways (OpenRouter) return inside an HTTP 200 body. */
export function failureForStatus(status: number, message: string | undefined, code: string | undefined, ctx: FailureContext): TaskFailure {
  const details: Record<string, unknown> = { provider: ctx.provider, status, ...(code ? { providerCode: code } : {}) };
  const said = message ? `: ${clean(message, ctx.apiKey)}` : '';
  if (status === 401 || status === 403) {
    return new TaskFailure('LLM_AUTH_FAILED', `The model provider refused the credentials (HTTP ${status})${said}`, details);
  }
  // Exhausted credit is reported as 429 (OpenAI) or 402 (Anthropic); waiting does not help.
  if (status === 402 || code === 'insufficient_quota') {
    return new TaskFailure('LLM_QUOTA_EXCEEDED', `The model provider account has no quota left (HTTP ${status})${said}`, details);
  }
  if (status === 429) {
    return new TaskFailure('LLM_RATE_LIMITED', `The model provider is rate limiting requests (HTTP 429)${said}`, details);
  }
  if (status === 408 || status === 409 || status >= 500) {
    return new TaskFailure('LLM_ERROR', `The model provider failed (HTTP ${status})${said}`, details);
  }
  return new TaskFailure('LLM_BAD_REQUEST', `The model provider rejected the request (HTTP ${status})${said}`, details);
}

function clean(text: string, apiKey: string): string {
  const oneLine = redactSecrets(text, apiKey).replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_PROVIDER_MESSAGE ? `${oneLine.slice(0, MAX_PROVIDER_MESSAGE)}…` : oneLine;
}

/** The provider's own words, without the SDK's "401 " status prefix. */
function providerMessage(err: OpenAiApiError | AnthropicApiError): string | undefined {
  const body = err.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const inner = body?.error?.message ?? body?.message;
  if (typeof inner === 'string' && inner) return inner;
  return err.message.replace(/^\d{3}\s+/, '') || undefined;
}

function providerCode(err: OpenAiApiError | AnthropicApiError): string | undefined {
  const code = err instanceof OpenAiApiError ? err.code : (err.errorCode ?? err.type);
  return typeof code === 'string' && code ? code : undefined;
}

/** fetch wraps the socket error (ECONNREFUSED, ENOTFOUND, ...) a few causes deep. */
function connectionReason(err: Error): string | undefined {
  let cur: unknown = err.cause;
  for (let depth = 0; cur && depth < 5; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

function endpoint(baseURL: string | undefined): string {
  if (!baseURL) return '';
  try {
    return ` at ${new URL(baseURL).host}`;
  } catch {
    return '';
  }
}
