import fs from 'node:fs';
import path from 'node:path';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ERROR_CATALOGUE, NON_RETRYABLE_ERROR_TYPES, canRetryLater, canRetryNow, isErrorCode, statusOf, type ErrorCode } from './error-codes';
import { failureOf, NoInstancesError, ServiceError, TaskFailure, toTemporalFailure, UnauthorizedError } from './errors';
import { endsTaskAtOnce } from './error-codes';
import { updateRejection } from '../sessions/update-rejection';

const SRC = path.join(__dirname, '..');

/** The codes interface.md lists (Errors → Codes), with the HTTP status the contract or decisions.md gives them. */
const CONTRACT: Record<string, number> = {
  INVALID_PARAMS: 400,
  INVALID_PARAMETER: 400,
  MISSING_REQUIRED_FIELD: 400,
  INVALID_TASK_DETAILS: 400,
  INVALID_API_KEY: 401,
  API_KEY_EXPIRED: 401,
  UNAUTHORIZED: 401,
  INSUFFICIENT_BALANCE: 402,
  PAYMENT_FAILED: 402,
  ACCOUNT_DEACTIVATED: 403,
  SESSION_NOT_FOUND: 404,
  SESSION_EXPIRED: 404,
  SESSION_LIMIT_REACHED: 429,
  INSTANCE_UNAVAILABLE: 503,
  NO_INSTANCES_AVAILABLE: 503,
  TASK_NOT_FOUND: 404,
  TASK_ALREADY_RUNNING: 409,
  TASK_TIMEOUT: 500,
  NAVIGATION_TIMEOUT: 500,
  PAGE_CRASH: 500,
  ELEMENT_NOT_FOUND: 500,
  RATE_LIMIT_EXCEEDED: 429,
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [p] : [];
  });
}

describe('the error catalogue', () => {
  it.each(Object.entries(CONTRACT))('holds the contract code %s with status %i', (code, status) => {
    expect(isErrorCode(code)).toBe(true);
    expect(statusOf(code)).toBe(status);
    expect(new ServiceError(code as ErrorCode, 'm').toBody()).toEqual({ success: false, error: 'm', message: 'm', code });
    expect(new ServiceError(code as ErrorCode, 'm').status).toBe(status);
  });

  it('gives every code an HTTP error status and a retry class', () => {
    for (const [code, spec] of Object.entries(ERROR_CATALOGUE)) {
      expect([code, spec.status >= 400 && spec.status < 600]).toEqual([code, true]);
      expect(['now', 'later', 'never']).toContain(spec.retry);
    }
  });

  it('knows every failure code the source raises as a Temporal failure type or a task error code', () => {
    const unknown = new Set<string>();
    for (const file of sourceFiles(SRC)) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:ApplicationFailure\.create\(\{\s*type|\bcode): '([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g)) {
        if (!isErrorCode(m[1])) unknown.add(`${m[1]} (${path.relative(SRC, file)})`);
      }
    }
    expect([...unknown]).toEqual([]);
  });

  it('decides retries from the catalogue', () => {
    expect(canRetryNow('NO_INSTANCES_AVAILABLE')).toBe(true);
    expect(new NoInstancesError().retryable).toBe(true);
    expect(new TaskFailure('ELEMENT_NOT_FOUND', 'x').retryable).toBe(false);
    expect(new TaskFailure('LLM_RATE_LIMITED', 'x').retryable).toBe(true);
    // A trigger run attempts again after what may pass, never after what needs the owner.
    expect(canRetryLater('NAVIGATION_TIMEOUT')).toBe(true);
    expect(canRetryLater('SESSION_LIMIT_REACHED')).toBe(true);
    for (const code of ['INSUFFICIENT_BALANCE', 'ACCOUNT_DEACTIVATED', 'ENVIRONMENT_NOT_FOUND', 'USER_NOT_FOUND', 'POLICY_NOT_FOUND', 'POLICY_BLOCKED']) expect(canRetryLater(code)).toBe(false);
    // Temporal retries a failed delivery attempt, never a refused one.
    expect(NON_RETRYABLE_ERROR_TYPES).toEqual(expect.arrayContaining(['WEBHOOK_REFUSED', 'CHAT_REFUSED', 'CHAT_NOT_CONNECTED']));
    expect(NON_RETRYABLE_ERROR_TYPES).not.toContain('WEBHOOK_FAILED');
    expect(NON_RETRYABLE_ERROR_TYPES).not.toContain('DELIVERY_OUTCOME_MISSING');
    // Codes from outside the catalogue are server errors that a later attempt may mend.
    expect(statusOf('SOMETHING_ELSE')).toBe(500);
    expect(canRetryLater('SOMETHING_ELSE')).toBe(true);
  });

  it('answers 401 API_KEY_EXPIRED for an expired key', () => {
    const e = new UnauthorizedError('API key expired', 'API_KEY_EXPIRED');
    expect([e.status, e.code]).toEqual([401, 'API_KEY_EXPIRED']);
  });
});

describe('rejections of session updates', () => {
  const failed = (cause: Error) => new WorkflowUpdateFailedError('Workflow Update failed', cause);

  it('keep the code of the workflow and take its status from the catalogue', () => {
    const e = updateRejection(failed(ApplicationFailure.create({ type: 'TASK_ALREADY_RUNNING', message: 'busy', details: [{ taskId: 't' }] })));
    expect(e && [e.status, e.code, e.details]).toEqual([409, 'TASK_ALREADY_RUNNING', { taskId: 't' }]);
  });

  it('are INSTANCE_UNAVAILABLE (503) when the browser worker of the session is gone', () => {
    const lost = new ActivityFailure('lost', 'interact', '1', RetryState.NON_RETRYABLE_FAILURE, 'w', ApplicationFailure.create({ type: 'INSTANCE_LOST', message: 'gone' }));
    const silent = new ActivityFailure('timeout', 'interact', '1', RetryState.TIMEOUT, 'w', new TimeoutFailure('t', undefined, TimeoutType.SCHEDULE_TO_START));
    for (const cause of [lost, silent]) {
      const e = updateRejection(failed(cause));
      expect(e && [e.status, e.code]).toEqual([503, 'INSTANCE_UNAVAILABLE']);
    }
    expect(updateRejection(new Error('other'))).toBeNull();
  });
});

describe('errors become Temporal failures in one way', () => {
  it('takes the status and the retry class from the catalogue only', () => {
    for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
      const err = new ServiceError(code, 'x');
      expect([err.status, err.retryable]).toEqual([statusOf(code), canRetryNow(code)]);
    }
  });

  it('keeps the code, the message and the details, retried only when the catalogue says so', () => {
    const retried = toTemporalFailure(new TaskFailure('LLM_UNAVAILABLE', 'no answer', { provider: 'openai' }));
    expect([retried.type, retried.message, retried.nonRetryable, retried.details]).toEqual(['LLM_UNAVAILABLE', 'no answer', false, [{ provider: 'openai' }]]);
    const final = toTemporalFailure(new TaskFailure('ELEMENT_NOT_FOUND', 'gone'), { message: 'masked', details: { index: 3 } });
    expect([final.type, final.message, final.nonRetryable, final.details]).toEqual(['ELEMENT_NOT_FOUND', 'masked', true, [{ index: 3 }]]);
    expect(toTemporalFailure(new NoInstancesError(), { retry: false }).nonRetryable).toBe(true);
  });

  it('turns anything else into TASK_FAILED (or the fallback given), not retried', () => {
    const crash = toTemporalFailure(new TypeError('x is undefined'));
    expect([crash.type, crash.message, crash.nonRetryable]).toEqual(['TASK_FAILED', 'x is undefined', true]);
    expect(toTemporalFailure('text', { fallback: 'INTERNAL_ERROR' }).type).toBe('INTERNAL_ERROR');
  });

  it('builds a failure from a code, with a retry delay when given', () => {
    const later = failureOf('WEBHOOK_FAILED', 'HTTP 503', { statusCode: 503 }, 5000);
    expect([later.type, later.nonRetryable, later.nextRetryDelay]).toEqual(['WEBHOOK_FAILED', false, 5000]);
    expect(failureOf('WEBHOOK_REFUSED', 'HTTP 410').nonRetryable).toBe(true);
  });

  it('says which codes end a task at once', () => {
    expect(['NAVIGATION_TIMEOUT', 'PAGE_CRASH', 'INVALID_STRUCTURED_OUTPUT'].every(endsTaskAtOnce)).toBe(true);
    expect(endsTaskAtOnce('ELEMENT_NOT_FOUND')).toBe(false);
    expect(endsTaskAtOnce('NOT_A_CODE')).toBe(false);
  });
});
