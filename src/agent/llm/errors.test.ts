import OpenAI from 'openai';
import { TaskFailure } from '../../contracts/errors';
import { LlmAbortError, failureForStatus, isAbortError, redactSecrets, toLlmFailure } from './errors';

const ctx = { provider: 'openai' as const, apiKey: 'my-own-local-key', timeoutMs: 1000 };

describe('LLM error mapping', () => {
  it('recognises aborts of every kind', () => {
    expect(isAbortError(new LlmAbortError())).toBe(true);
    expect(isAbortError(new OpenAI.APIUserAbortError())).toBe(true);
    expect(isAbortError(new DOMException('stop', 'AbortError'))).toBe(true);
    expect(isAbortError(new Error('boom'))).toBe(false);
    expect(isAbortError(null)).toBe(false);
  });

  it('turns any error into an abort once the signal has fired', () => {
    const controller = new AbortController();
    controller.abort();
    expect(toLlmFailure(new Error('socket hang up'), { ...ctx, signal: controller.signal })).toBeInstanceOf(LlmAbortError);
  });

  it('maps statuses to codes and retryability', () => {
    const code = (status: number, providerCode?: string) => {
      const f = failureForStatus(status, 'msg', providerCode, ctx);
      return [f.code, f.retryable];
    };
    expect(code(401)).toEqual(['LLM_AUTH_FAILED', false]);
    expect(code(403)).toEqual(['LLM_AUTH_FAILED', false]);
    expect(code(429)).toEqual(['LLM_RATE_LIMITED', true]);
    expect(code(429, 'insufficient_quota')).toEqual(['LLM_QUOTA_EXCEEDED', false]);
    expect(code(402)).toEqual(['LLM_QUOTA_EXCEEDED', false]);
    expect(code(400)).toEqual(['LLM_BAD_REQUEST', false]);
    expect(code(404)).toEqual(['LLM_BAD_REQUEST', false]);
    expect(code(500)).toEqual(['LLM_ERROR', true]);
    expect(code(503)).toEqual(['LLM_ERROR', true]);
  });

  it('keeps keys out of messages', () => {
    expect(redactSecrets('bad key my-own-local-key', 'my-own-local-key')).toBe('bad key [redacted]');
    expect(redactSecrets('Incorrect API key provided: sk-proj-****abcd.', '')).toBe('Incorrect API key provided: [redacted].');
    expect(redactSecrets('header Authorization: Bearer abc.def', '')).toBe('header Authorization: Bearer [redacted]');
    const failure = toLlmFailure(new Error('request with my-own-local-key failed'), ctx);
    expect(failure).toBeInstanceOf(TaskFailure);
    expect(failure.message).not.toContain('my-own-local-key');
  });
});
