import { SessionState, usageOf, stoppedMessage } from './session-state';
import type { TaskParams } from '../contracts/session-types';

const params: TaskParams = {
  prompt: 'p',
  startingUrl: null,
  maxDuration: 300000,
  maxInputTokens: 100000,
  maxOutputTokens: 100000,
  terminateOnCompletion: false,
  outputType: 'text',
  files: [],
};

const failureType = (fn: () => unknown) => {
  try {
    fn();
  } catch (e: any) {
    return e.type;
  }
  return undefined;
};

describe('SessionState', () => {
  it('queues the first task asked to end when the session was terminated while it started', () => {
    const s = new SessionState('s1', 0);
    s.applyStateChange('terminate', 5);
    expect(failureType(() => s.enqueueTask('t1', params, 10))).toBe('SESSION_NOT_FOUND');
    s.enqueueInitialTask('t1', params, 10);
    const t = s.beginTask(20);
    expect(t).toMatchObject({ taskId: 't1', endRequest: 'terminate' });
    s.finishTask(t, 'stopped', 30);
    expect(t.status).toBe('stopped');
  });

  it('runs one task at a time', () => {
    const s = new SessionState('s1', 0);
    s.enqueueTask('t1', params, 10);
    expect(failureType(() => s.assertCanStartTask())).toBe('TASK_ALREADY_RUNNING');
    const t = s.beginTask(20);
    expect(failureType(() => s.enqueueTask('t2', params, 30))).toBe('TASK_ALREADY_RUNNING');
    s.finishTask(t, 'task_completed', 100, { message: 'ok' });
    expect(s.isTaskEnded('t1')).toBe(false); // not before its end is stored
    s.markRecorded(t);
    expect(s.isTaskEnded('t1')).toBe(true);
    expect(() => s.enqueueTask('t2', params, 110)).not.toThrow();
    expect(s.previousTasks).toEqual([{ prompt: 'p', status: 'task_completed', result: 'ok' }]);
  });

  it('validates state changes against the task state', () => {
    const s = new SessionState('s1', 0);
    expect(failureType(() => s.assertStateChange('pause'))).toBe('NO_TASK_RUNNING');
    expect(() => s.assertStateChange('terminate')).not.toThrow();
    s.enqueueTask('t1', params, 0);
    s.beginTask(0);
    expect(failureType(() => s.assertStateChange('resume'))).toBe('INVALID_STATE');
    expect(s.applyStateChange('pause', 5)).toBe('Task paused');
    expect(s.current!.status).toBe('paused');
    expect(failureType(() => s.assertStateChange('pause'))).toBe('INVALID_STATE');
    expect(s.applyStateChange('resume', 6)).toBe('Task resumed');
    expect(s.applyStateChange('stop', 7)).toBe('Task stopped');
    expect(s.current!.endRequest).toBe('stop');
    expect(s.applyStateChange('terminate', 8)).toBe('Session terminated');
    expect(s.endRequested).toBe('terminated');
    expect(failureType(() => s.assertCanStartTask())).toBe('SESSION_NOT_FOUND');
  });

  it('passes a guardrail answer to the next step once', () => {
    const s = new SessionState('s1', 0);
    s.enqueueTask('t1', params, 0);
    const t = s.beginTask(0);
    expect(failureType(() => s.assertGuardrailAnswer())).toBe('NO_GUARDRAIL_PENDING');
    s.awaitHuman(t, { type: 'two_factor_code', value: 'code?' });
    expect(s.isTaskSettled('t1')).toBe(true);
    s.answerGuardrail('123456', 50);
    expect(t.status).toBe('running');
    expect(t.humanReply).toBe('123456');
    expect(s.lastActivityAt).toBe(50);
  });

  it('sums usage and cost across steps', () => {
    const s = new SessionState('s1', 0);
    s.enqueueTask('t1', params, 0);
    const t = s.beginTask(1000);
    s.recordStep(t, { kind: 'continue', usage: { inputTokens: 100, outputTokens: 10 }, cost: 0.0001 });
    s.recordStep(t, { kind: 'continue', usage: { inputTokens: 200, outputTokens: 20 }, cost: 0.0002 });
    s.finishTask(t, 'task_completed', 3500);
    expect(usageOf(t, 9999)).toEqual({ prompt_tokens: 300, completion_tokens: 30, total_tokens: 330, completion_time: 2.5, cost: 0.0003 });
  });

  it('changes only tasks of its own', () => {
    const a = new SessionState('a', 0);
    a.enqueueTask('t1', params, 0);
    const foreign = a.beginTask(0);
    const b = new SessionState('b', 0);
    b.enqueueTask('t1', params, 0);
    const own = b.beginTask(0);
    expect(() => b.recordStep(foreign, { kind: 'continue', usage: { inputTokens: 1, outputTokens: 1 } })).toThrow(/not a recent task/);
    b.recordStep(own, { kind: 'continue', usage: { inputTokens: 1, outputTokens: 1 } });
    expect(own.steps).toBe(1);
    expect(foreign.steps).toBe(0);
  });

  it('keeps the last 20 tasks for queries', () => {
    const s = new SessionState('s1', 0);
    for (let i = 1; i <= 21; i++) {
      s.enqueueTask(`t${i}`, params, i);
      s.finishTask(s.beginTask(i), 'task_completed', i);
    }
    expect(s.taskView('t1', 100)).toBeNull();
    expect(s.taskView('t2', 100)?.taskId).toBe('t2');
    expect(s.taskView('t21', 100)?.status).toBe('task_completed');
  });
});

describe('a stopped task’s message', () => {
  it('is the agent’s last words, or a summary of its steps', () => {
    expect(stoppedMessage({ lastWords: 'Looking for the invoice.', lastAction: 'scroll down', steps: 3 })).toBe('Looking for the invoice.');
    expect(stoppedMessage({ lastAction: 'click_element [4] button "Next"', steps: 2 })).toBe('Stopped after 2 steps; the last: click_element [4] button "Next".');
    expect(stoppedMessage({ steps: 0 })).toBe('Stopped before the agent took a step.');
  });
});
