import { createLogger } from '../logger';
import type { RecordingsRepository } from '../store/recordings.repository';
import { Recorder, type NewStep, type StepPictureSource } from './recorder';
import type { RecordedStep } from '../contracts/recording';

const owner = { userId: 'usr_1', sessionId: 'ses_1', taskId: 'tsk_1' };
const step = (action: string): NewStep => ({ by: 'agent', action, args: {}, urlBefore: 'about:blank', urlAfter: 'about:blank', outcome: 'ok' });

/** The repository as the recorder uses it: places by `_id` (task and place), inserts counted. */
function fakeRecordings(opts: { taken?: Set<number>; fail?: boolean } = {}) {
  const tasks = new Map<string, Map<number, RecordedStep>>();
  const of = (taskId: string) => tasks.get(taskId) ?? tasks.set(taskId, new Map()).get(taskId)!;
  const calls = { addMany: 0, add: 0, batches: [] as number[] };
  // Places another writer took (of the first task).
  const taken = opts.taken ?? new Set<number>();
  const free = (taskId: string, seq: number) => !of(taskId).has(seq) && !(taskId === owner.taskId && taken.has(seq));
  const repo = {
    async nextSeq(taskId: string) {
      let n = 0;
      while (!free(taskId, n)) n++;
      return n;
    },
    async addMany(o: { taskId: string }, steps: RecordedStep[]) {
      calls.addMany++;
      calls.batches.push(steps.length);
      if (opts.fail) throw new Error('database down');
      for (let k = 0; k < steps.length; k++) {
        if (!free(o.taskId, steps[k].seq)) return k;
        of(o.taskId).set(steps[k].seq, { ...steps[k] });
      }
      return steps.length;
    },
    async add(o: { taskId: string }, s: RecordedStep) {
      calls.add++;
      if (!free(o.taskId, s.seq)) return false;
      of(o.taskId).set(s.seq, { ...s });
      return true;
    },
    async begin() {},
  };
  return { repo: repo as unknown as RecordingsRepository, stored: of(owner.taskId), storedOf: of, calls };
}

function fakePictures(opts: { shootFails?: Set<string>; storeFails?: boolean } = {}) {
  const stores: { seq: number; bytes: number }[][] = [];
  let shots = 0;
  const source: StepPictureSource = {
    async shoot() {
      shots++;
      if (opts.shootFails?.has(String(shots))) throw new Error('page crashed');
      return { jpeg: Buffer.from(`jpeg-${shots}`) };
    },
    async store(_o, list) {
      stores.push(list.map((s) => ({ seq: s.seq, bytes: s.jpeg.length })));
      if (opts.storeFails) throw new Error('quota store down');
      return new Map(list.map((s) => [s.seq, `file_${s.seq}`]));
    },
  };
  return { source, stores };
}

const logger = createLogger('silent');

describe('Recorder', () => {
  it('writes a task\'s steps together, in order, each with its picture, once the task settles', async () => {
    const { repo, stored, calls } = fakeRecordings();
    const pictures = fakePictures();
    const recorder = new Recorder({ recordings: repo, logger, pictures: pictures.source, lingerMs: 60_000 });
    const answers = ['click', 'type', 'scroll', 'done'].map((a) => recorder.add(owner, step(a)));
    await new Promise((r) => setTimeout(r, 20));
    expect(stored.size).toBe(0); // still lingering
    await recorder.settle(owner.taskId);
    expect(calls.addMany).toBe(1);
    expect(calls.batches).toEqual([4]);
    expect(pictures.stores).toHaveLength(1);
    expect([...stored.values()].map((s) => [s.seq, s.action, s.pictureFileId])).toEqual([
      [0, 'click', 'file_0'],
      [1, 'type', 'file_1'],
      [2, 'scroll', 'file_2'],
      [3, 'done', 'file_3'],
    ]);
    expect((await Promise.all(answers)).map((s) => s?.seq)).toEqual([0, 1, 2, 3]);
  });

  it('writes on its own after the linger time, and at once when a batch is full', async () => {
    const { repo, stored, calls } = fakeRecordings();
    const recorder = new Recorder({ recordings: repo, logger, lingerMs: 30, maxBatch: 3 });
    void recorder.add(owner, step('a'));
    await new Promise((r) => setTimeout(r, 120));
    expect(stored.size).toBe(1);
    const full = [recorder.add(owner, step('b')), recorder.add(owner, step('c')), recorder.add(owner, step('d'))];
    await Promise.all(full); // a full batch does not wait for the linger
    expect(calls.batches).toEqual([1, 3]);
    expect([...stored.keys()]).toEqual([0, 1, 2, 3]);
  });

  it('keeps a step whose picture could not be taken or stored, without a picture', async () => {
    const { repo, stored } = fakeRecordings();
    const pictures = fakePictures({ shootFails: new Set(['2']) });
    const recorder = new Recorder({ recordings: repo, logger, pictures: pictures.source, lingerMs: 60_000 });
    ['a', 'b', 'c'].forEach((a) => void recorder.add(owner, step(a)));
    await recorder.settle(owner.taskId);
    expect([...stored.values()].map((s) => s.pictureFileId)).toEqual(['file_0', undefined, 'file_2']);
    expect([...stored.values()].map((s) => s.pictureSkipped)).toEqual([undefined, 'failed', undefined]);
    expect(pictures.stores[0].map((s) => s.seq)).toEqual([0, 2]);

    const broken = fakePictures({ storeFails: true });
    const other = fakeRecordings();
    const recorder2 = new Recorder({ recordings: other.repo, logger, pictures: broken.source, lingerMs: 60_000 });
    ['a', 'b'].forEach((a) => void recorder2.add(owner, step(a)));
    await recorder2.settle(owner.taskId);
    expect([...other.stored.values()].map((s) => [s.seq, s.pictureFileId, s.pictureSkipped])).toEqual([
      [0, undefined, 'not_stored'],
      [1, undefined, 'not_stored'],
    ]);
  });

  it('says why a step has no picture: skipped by the source, or past the quota', async () => {
    const { repo, stored } = fakeRecordings();
    const answers = [{ jpeg: Buffer.from('a') }, { skipped: 'unchanged' as const }, { jpeg: Buffer.from('c') }, { skipped: 'busy' as const }];
    let shot = 0;
    const source: StepPictureSource = {
      shoot: async () => answers[shot++],
      // the quota keeps the first picture only
      store: async (_o, list) => new Map(list.slice(0, 1).map((s) => [s.seq, `file_${s.seq}`])),
    };
    const recorder = new Recorder({ recordings: repo, logger, pictures: source, lingerMs: 60_000 });
    ['a', 'b', 'c', 'd'].forEach((a) => void recorder.add(owner, step(a)));
    await recorder.settle(owner.taskId);
    expect([...stored.values()].map((s) => [s.pictureFileId, s.pictureSkipped])).toEqual([
      ['file_0', undefined],
      [undefined, 'unchanged'],
      [undefined, 'quota'],
      [undefined, 'busy'],
    ]);
  });

  it('puts steps whose places another writer took after the last stored step', async () => {
    // Places 0 and 2 are free when the recorder starts; 2 is taken by another worker before the write.
    const taken = new Set<number>();
    const { repo, stored, calls } = fakeRecordings({ taken });
    const recorder = new Recorder({ recordings: repo, logger, lingerMs: 60_000 });
    const answers = ['a', 'b', 'c'].map((a) => recorder.add(owner, step(a)));
    await new Promise((r) => setTimeout(r, 10));
    taken.add(1);
    await recorder.settle(owner.taskId);
    expect(calls.add).toBe(2);
    expect([...stored.values()].map((s) => [s.seq, s.action])).toEqual([
      [0, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
    expect((await Promise.all(answers)).map((s) => s?.seq)).toEqual([0, 2, 3]);
  });

  it('writes what waits of every task when the worker stops', async () => {
    const { repo, stored, storedOf } = fakeRecordings();
    const recorder = new Recorder({ recordings: repo, logger, lingerMs: 60_000 });
    void recorder.add(owner, step('a'));
    void recorder.add({ ...owner, taskId: 'tsk_2' }, step('b'));
    await new Promise((r) => setTimeout(r, 10));
    expect(stored.size).toBe(0);
    await recorder.settleAll();
    expect([...stored.values()].map((s) => [s.seq, s.action])).toEqual([[0, 'a']]);
    expect([...storedOf('tsk_2').values()].map((s) => [s.seq, s.action])).toEqual([[0, 'b']]);
  });

  it('never fails the task when the recording cannot be written', async () => {
    const { repo } = fakeRecordings({ fail: true });
    const recorder = new Recorder({ recordings: repo, logger, lingerMs: 60_000 });
    const answer = recorder.add(owner, step('a'));
    await expect(recorder.settle(owner.taskId)).resolves.toBeUndefined();
    await expect(answer).resolves.toBeUndefined();
  });
});
