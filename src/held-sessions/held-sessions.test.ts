import { createLogger } from '../logger';
import type { StepAnswer } from './agent-step';
import { withProxyTraffic } from './agent-step';
import { HeldSessions, type HeldSessionsDeps } from './held-sessions';
import { TaskContexts } from './task-contexts';

/** A worker holding one session, whose every cleanup is written down in the order made. */
function worker(options: { failingSnapshots?: boolean } = {}) {
  const calls: string[] = [];
  const note = (name: string) => async () => {
    calls.push(name);
  };
  let open = true;
  const deps = {
    pool: {
      has: () => open,
      get: () => undefined,
      ids: () => (open ? ['s1'] : []),
      close: async () => {
        calls.push('pool.close');
        open = false;
      },
      hibernationState: async () => ({ storageState: '{}' }),
      snapshot: async () => undefined,
    },
    agent: { forget: () => calls.push('agent.forget'), saveMemory: () => undefined },
    store: {
      snapshots: {
        remove: async () => {
          calls.push('snapshots.remove');
          if (options.failingSnapshots) throw new Error('database busy');
        },
      },
    },
    hibernations: { remove: note('hibernations.remove'), save: async () => (calls.push('hibernations.save'), 42) },
    onClosed: note('onClosed'),
    profiles: { persist: note('profiles.persist'), discard: note('profiles.discard'), materialize: async () => '' },
    logger: createLogger('silent'),
  } as unknown as HeldSessionsDeps;
  return { held: new HeldSessions(deps), calls };
}

describe('the sessions a worker holds', () => {
  it('closes a session for good: its snapshot, hibernation record and files go, its profile is archived back', async () => {
    const { held, calls } = worker();
    await held.close('s1', { profileId: 'p1' } as never);
    expect(calls).toEqual(['agent.forget', 'pool.close', 'snapshots.remove', 'hibernations.remove', 'onClosed', 'profiles.persist']);
  });

  it('hibernates a session: sealed first, then the same way out, its hibernation record kept', async () => {
    const { held, calls } = worker();
    await expect(held.hibernate('s1')).resolves.toEqual({ bytes: 42 });
    expect(calls).toEqual(['hibernations.save', 'agent.forget', 'pool.close', 'snapshots.remove', 'onClosed']);
  });

  it('releases a session whose workflow is gone, letting a failed cleanup go and discarding its profile directory', async () => {
    jest.useFakeTimers();
    try {
      const { held, calls } = worker({ failingSnapshots: true });
      const stop = new AbortController();
      stop.abort();
      const holding = held.hold('s1', stop.signal, () => true);
      await jest.advanceTimersByTimeAsync(16_000); // no newer run takes a lease meanwhile
      await expect(holding).resolves.toBe('cancelled');
      expect(calls).toEqual(['agent.forget', 'pool.close', 'snapshots.remove', 'onClosed', 'profiles.discard']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('leaves the browser to a run that continued the session as new', async () => {
    jest.useFakeTimers();
    try {
      const { held, calls } = worker();
      const stop = new AbortController();
      const newer = held.hold('s1', stop.signal, () => false);
      const old = new AbortController();
      old.abort();
      const holding = held.hold('s1', old.signal, () => true);
      await jest.advanceTimersByTimeAsync(1_000);
      await expect(holding).resolves.toBe('cancelled');
      expect(calls).toEqual([]);
      stop.abort();
      await jest.advanceTimersByTimeAsync(3_000);
      await expect(newer).resolves.toBe('cancelled');
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('a worker that stops', () => {
  it("hands a held session over once its running step ended: its state sealed and kept for the next worker, its lease ended as handed over", async () => {
    const { held, calls } = worker();
    let endStep!: () => void;
    const stepping = (held as unknown as { handover: { step<T>(id: string, run: () => Promise<T>): Promise<T> } }).handover.step('s1', () => new Promise<void>((r) => (endStep = r)));
    const holding = held.hold('s1', new AbortController().signal, () => false);
    const handing = held.handOverAll(10_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toEqual([]); // the step still runs
    endStep();
    await stepping;
    await expect(handing).resolves.toBe(1);
    await expect(holding).resolves.toBe('handed_over');
    expect(calls).toEqual(['hibernations.save', 'agent.forget', 'pool.close', 'onClosed', 'profiles.discard']);
  });

  it('opens no session and runs no step once stopping: a step sent to it is answered as cancelled when its workflow cancels it', async () => {
    const { held } = worker();
    await held.handOverAll(0);
    expect(held.draining).toBe(true);
    await expect(held.open({ sessionId: 's2', userId: 'u1', restore: true })).rejects.toMatchObject({ type: 'INSTANCE_LOST' });
    const cancel = new AbortController();
    const step = held.step({ sessionId: 's1', userId: 'u1', taskId: 't1', stepNo: 1, remaining: { inputTokens: 1, outputTokens: 1 } }, cancel.signal);
    cancel.abort();
    await expect(step).rejects.toMatchObject({ cancelled: { usage: { inputTokens: 0, outputTokens: 0 }, cost: 0 } });
  });
});

describe("a task's context on the worker", () => {
  const step = { sessionId: 's1', userId: 'u1', taskId: 't1', stepNo: 1, remaining: { inputTokens: 1, outputTokens: 1 } };
  const context = { params: { prompt: 'find the price' } as never, previousTasks: [] };

  it('comes with the first step and serves the next ones of the same task', () => {
    const contexts = new TaskContexts();
    expect(contexts.inputOf({ ...step, context }).params).toEqual({ prompt: 'find the price' });
    expect(contexts.inputOf({ ...step, stepNo: 2 }).params).toEqual({ prompt: 'find the price' });
  });

  it('is missing for another task, or once the session is forgotten', () => {
    const contexts = new TaskContexts();
    contexts.inputOf({ ...step, context });
    expect(() => contexts.inputOf({ ...step, taskId: 't2' })).toThrow(expect.objectContaining({ type: 'TASK_CONTEXT_UNAVAILABLE' }));
    contexts.forget('s1');
    expect(() => contexts.inputOf({ ...step, stepNo: 2 })).toThrow(expect.objectContaining({ type: 'TASK_CONTEXT_UNAVAILABLE' }));
  });
});

it("adds the managed proxy's traffic to the step's cost, to the nano-dollar", () => {
  const result = { kind: 'continue', cost: 0.1 } as unknown as StepAnswer;
  withProxyTraffic(result, { bytes: 2048, cost: 0.2 });
  expect(result).toMatchObject({ cost: 0.3, proxy: { bytes: 2048, cost: 0.2 } });
});
