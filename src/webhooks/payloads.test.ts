import { buildPayload, failedRunEnvelope, type DeliverySubject } from './payloads';

const completed: DeliverySubject = {
  sessionId: 'sess1',
  taskId: 'task_1',
  status: 'task_completed',
  message: '{"total":12}',
  completedAt: 1764000000123,
  envelope: {
    success: true,
    sessionId: 'sess1',
    taskId: 'task_1',
    type: 'task_completed',
    status: 'task_completed',
    data: { message: '{"total":12}', files: [], network: [] },
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, completion_time: 1.5, cost: 0.001 },
    completedAt: '2025-11-24T16:00:00.123Z',
  },
};

const failed: DeliverySubject = {
  sessionId: 'sess2',
  taskId: 'task_2',
  status: 'failed',
  message: '',
  completedAt: 1764000000000,
  envelope: { success: false, sessionId: 'sess2', taskId: 'task_2', status: 'failed', error: 'Task exceeded maxDuration', code: 'TASK_TIMEOUT', usage: { cost: 0 } },
};

describe('webhook payloads', () => {
  it('ai_response carries only the model output', () => {
    expect(buildPayload('ai_response', completed)).toEqual({ sessionId: 'sess1', taskId: 'task_1', type: 'task_completed', data: { message: '{"total":12}' } });
  });

  it('full_response is the polled envelope, usage included', () => {
    expect(buildPayload('full_response', completed)).toEqual(completed.envelope);
    expect(buildPayload('full_response', failed)).toEqual({ ...failed.envelope, type: 'task_failed' });
  });

  it('just_ping says what happened and when, without data', () => {
    expect(buildPayload('just_ping', failed)).toEqual({ sessionId: 'sess2', taskId: 'task_2', type: 'task_failed', status: 'failed', timestamp: 1764000000000 });
    expect(buildPayload('just_ping', { ...completed, status: 'stopped' })).toMatchObject({ type: 'task_stopped', status: 'stopped' });
  });

  it('trigger runs name the cron job and the run', () => {
    const run = { ...completed, trigger: { cronJobId: 'cron_1', runId: 'run_1' } };
    expect(buildPayload('ai_response', run)).toEqual({ sessionId: 'sess1', taskId: 'task_1', type: 'task_completed', data: { message: '{"total":12}' }, cronJobId: 'cron_1', runId: 'run_1' });
    expect(buildPayload('just_ping', run)).toMatchObject({ cronJobId: 'cron_1', runId: 'run_1' });
    expect(buildPayload('full_response', run)).toMatchObject({ usage: completed.envelope.usage, cronJobId: 'cron_1', runId: 'run_1' });
  });

  it('a run that never had a task is a failed envelope with zero usage', () => {
    const envelope = failedRunEnvelope({ sessionId: null, taskId: null, error: 'Insufficient balance', code: 'INSUFFICIENT_BALANCE', completedAt: 0 });
    expect(envelope).toEqual({
      success: false,
      sessionId: null,
      taskId: null,
      status: 'failed',
      error: 'Insufficient balance',
      code: 'INSUFFICIENT_BALANCE',
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, completion_time: 0, cost: 0 },
      completedAt: '1970-01-01T00:00:00.000Z',
    });
  });

  it('never carries fields it was not given (no secrets can slip in)', () => {
    const withSecret = { ...completed, secrets: [{ match: 'all', fields: { password: 'hunter2' } }] } as DeliverySubject;
    for (const kind of ['ai_response', 'just_ping', 'full_response'] as const) expect(JSON.stringify(buildPayload(kind, withSecret))).not.toContain('hunter2');
  });
});
