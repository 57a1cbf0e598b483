import type { Client } from '@temporalio/client';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import type { Store } from '../store/store';
import type { WorkerRegistry } from '../store/worker-registry';
import type { TaskView } from '../contracts/session-types';
import { SessionsService } from './sessions.service';

const base: TaskView = {
  taskId: 'task_1',
  sessionId: 'ses_1',
  status: 'running',
  createdAt: 1,
  usage: { inputTokens: 0, outputTokens: 0, cost: 0 },
} as unknown as TaskView;
const network = [{ id: 'net_task_1', taskId: 'task_1', urls: [{ url: 'http://127.0.0.1/signed-in.html', timestamp: 2 }] }];

/**
 * Polling a task that ends between the store read and the workflow query: the task's
 * requests were stored before it ended, so the answer must carry them.
 */
function serviceWith(reads: (TaskView | null)[], live: TaskView | null) {
  const get = jest.fn(async () => (reads.length > 1 ? reads.shift()! : reads[0]));
  const query = jest.fn(async () => live);
  // the workflow answers the wait once the task is recorded: its requests are stored by then
  const executeUpdate = jest.fn(async () => live);
  const store = { tasks: { get }, db: { collection: () => ({}) } } as unknown as Store;
  const temporal = { workflow: { getHandle: () => ({ query, executeUpdate }) } } as unknown as Client;
  const service = new SessionsService({ config: loadConfig({}), temporal, store, registry: {} as WorkerRegistry, logger: createLogger('silent') });
  return { service, get, query, executeUpdate };
}

describe('SessionsService.task (polling)', () => {
  it('answers an end seen live with the requests stored before it', async () => {
    // first read: still running, nothing stored; by the query the task is done, and it is answered once its record (with its requests) holds the end
    const { service, get, executeUpdate } = serviceWith([{ ...base }, { ...base, status: 'task_completed', message: 'ok', network }], { ...base, status: 'task_completed', message: 'ok' });
    const view = await service.task('ses_1', 'task_1');
    expect(view?.status).toBe('task_completed');
    expect(view?.message).toBe('ok');
    expect(view?.network).toEqual(network);
    expect(get).toHaveBeenCalledTimes(2);
    expect(executeUpdate).toHaveBeenCalledTimes(1);
  });

  it('reads the store once while the task runs, and not the workflow once it is recorded', async () => {
    const running = serviceWith([{ ...base }], { ...base, message: 'step 4' });
    expect((await running.service.task('ses_1', 'task_1'))?.message).toBe('step 4');
    expect(running.get).toHaveBeenCalledTimes(1);
    expect(running.executeUpdate).not.toHaveBeenCalled();
    const done = serviceWith([{ ...base, status: 'failed' } as TaskView], null);
    expect((await done.service.task('ses_1', 'task_1'))?.status).toBe('failed');
    expect(done.query).not.toHaveBeenCalled();
  });
});

describe('SessionsService.outcome (the wait of MCP and chat completions)', () => {
  it('waits one inline wait after another until the task ends or asks for a human', async () => {
    const running = { ...base };
    const asking = { ...base, status: 'guardrail_trigger' } as TaskView;
    const { service, executeUpdate } = serviceWith([{ ...base }], null);
    executeUpdate.mockResolvedValueOnce(null).mockResolvedValueOnce(running).mockResolvedValueOnce(asking);
    expect(await service.outcome('ses_1', 'task_1', { deadline: Date.now() + 60_000, stopped: () => false })).toBe(asking);
    expect(executeUpdate).toHaveBeenCalledTimes(3);
  });

  it('gives up as soon as the caller went away or the deadline passed', async () => {
    const { service, executeUpdate } = serviceWith([{ ...base }], { ...base });
    let calls = 0;
    expect(await service.outcome('ses_1', 'task_1', { deadline: Date.now() + 60_000, stopped: () => calls++ >= 2 })).toBeNull();
    expect(executeUpdate).toHaveBeenCalledTimes(2);
    expect(await service.outcome('ses_1', 'task_1', { deadline: Date.now() - 1, stopped: () => false })).toBeNull();
    expect(executeUpdate).toHaveBeenCalledTimes(2);
  });
});
