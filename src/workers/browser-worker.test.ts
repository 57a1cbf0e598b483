import { msToNumber } from '@temporalio/common/lib/time';
import { sessionWorkflowOptions } from './browser-worker';

describe('workers of session workflows', () => {
  it('poll the configured queue with the session workflows', () => {
    const options = sessionWorkflowOptions({ TEMPORAL_TASK_QUEUE: 'sessions-q' });
    expect(options.taskQueue).toBe('sessions-q');
    expect(options.workflowsPath).toMatch(/workflows/);
  });

  it('give a workflow activation minutes, not the SDK’s 5 s, before taking it for a deadlock', () => {
    // A worker paused or starved of CPU for longer than the limit in the middle of an
    // activation is aborted by Node as a whole (every session on it lost).
    expect(msToNumber(sessionWorkflowOptions({ TEMPORAL_TASK_QUEUE: 'q' }).isolateExecutionTimeout)).toBeGreaterThanOrEqual(5 * 60_000);
  });
});
