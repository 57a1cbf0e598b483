import { runOutcome } from './trigger.activities';
import type { TaskView } from '../contracts/session-types';

const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, completion_time: 1, cost: 0.01 };
const task = (over: Partial<TaskView>): TaskView => ({ taskId: 'task_1', sessionId: 's1', status: 'task_completed', usage, createdAt: '2026-11-23T10:00:00Z', ...over });

describe('the outcome of a trigger run', () => {
  it('is completed with the task message, usage and cost', () => {
    expect(runOutcome({}, task({ message: '{"a":1}' }))).toEqual({ status: 'completed', result: '{"a":1}', usage, retryable: false });
  });

  it('is timed_out for TASK_TIMEOUT and failed otherwise, keeping the code and usage', () => {
    expect(runOutcome({}, task({ status: 'failed', code: 'TASK_TIMEOUT', error: 'Task exceeded maxDuration of 300000 ms' }))).toMatchObject({ status: 'timed_out', code: 'TASK_TIMEOUT', usage, retryable: true });
    expect(runOutcome({}, task({ status: 'failed', code: 'INVALID_STRUCTURED_OUTPUT', error: 'bad' }))).toMatchObject({ status: 'failed', code: 'INVALID_STRUCTURED_OUTPUT', error: 'bad' });
    expect(runOutcome({}, task({ status: 'stopped' }))).toMatchObject({ status: 'failed', code: 'TASK_STOPPED' });
  });

  it('fails without a task: the reason given, or the session error', () => {
    expect(runOutcome({ failure: { code: 'INSUFFICIENT_BALANCE', message: 'Insufficient balance', retryable: false } }, null)).toEqual({
      status: 'failed',
      result: null,
      code: 'INSUFFICIENT_BALANCE',
      error: 'Insufficient balance',
      usage: null,
      retryable: false,
    });
    expect(runOutcome({ sessionError: { code: 'NO_INSTANCES_AVAILABLE', message: 'No browser instance could open a browser' } }, null)).toMatchObject({ status: 'failed', code: 'NO_INSTANCES_AVAILABLE', retryable: true });
    expect(runOutcome({}, null)).toMatchObject({ status: 'failed', code: 'SESSION_FAILED' });
  });
});
