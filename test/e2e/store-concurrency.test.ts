/**
 * The records that must hold under concurrency, against the test database itself (FerretDB
 * here, whose updates are not atomic under concurrency): session slots, charges, profile
 * locks. Many processes of the service do these at once (API instances, workers).
 */
import { MongoClient, type Db } from 'mongodb';
import { ProfileLocks } from '../../src/store/profile-locks';
import { createStore, type Store } from '../../src/store/store';

let mongo: MongoClient;
let db: Db;
let store: Store;

beforeAll(async () => {
  mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test', { maxPoolSize: 40 });
  db = mongo.db();
  store = createStore(db);
});
afterAll(() => mongo.close());

const times = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));

describe('under concurrency', () => {
  it('gives out exactly the session limit of slots, and gets every one back', async () => {
    const user = await store.users.create(`slots-${Date.now()}@example.com`, 10, 3);
    const taken = (await times(30, () => store.users.acquireSessionSlot(user._id, 3))).filter(Boolean);
    expect(taken).toHaveLength(3);
    expect((await store.users.get(user._id))!.activeSessions).toBe(3);
    await times(3, () => store.users.releaseSessionSlot(user._id));
    expect((await store.users.get(user._id))!.activeSessions).toBe(0);
  });

  it('charges every task exactly once, however many charges run at once', async () => {
    const user = await store.users.create(`charges-${Date.now()}@example.com`, 10, 3);
    // 20 tasks finishing together, each charge sent three times (retried activities), and a top-up among them
    const results = await Promise.all([
      ...Array.from({ length: 60 }, (_, i) => store.users.chargeTask(user._id, `task_${i % 20}`, 0.25)),
      store.users.topUp(user._id, 5).then(() => ({ charged: false, balance: null })),
    ]);
    expect(results.filter((r) => r.charged)).toHaveLength(20);
    expect((await store.users.get(user._id))!.balance).toBeCloseTo(10 - 20 * 0.25 + 5, 9);
  });

  it('lets one session at a time hold a profile', async () => {
    const user = await store.users.create(`locks-${Date.now()}@example.com`, 10, 3);
    const env = (await store.environments.create(user._id, { name: 'shared' }, 20))!;
    const locks = new ProfileLocks(db);
    const source = { kind: 'environment' as const, id: env._id, userId: user._id };
    const outcomes = await times(20, (i) => locks.acquire(source, `ses_${i}`));
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'busy')).toHaveLength(19);
    const holder = `ses_${outcomes.indexOf('ok')}`;
    // the holder's retried acquire is still its own; an upload is refused meanwhile
    expect(await locks.acquire(source, holder)).toBe('ok');
    expect(await store.environments.beginUpload(env._id, user._id)).toEqual({ ok: false, reason: 'in_use' });
    await locks.release(source, holder);
    expect(await locks.acquire(source, 'ses_next')).toBe('ok');
    expect(await locks.acquire({ ...source, userId: 'usr_someone_else' }, 'ses_other')).toBe('missing');
  });

  it("stores a task's recorded steps in one insert up to the first place another writer took", async () => {
    const owner = { userId: 'usr_rec', sessionId: 'ses_rec', taskId: `tsk_rec${Date.now()}` };
    const step = (seq: number, action: string) => ({ seq, by: 'agent' as const, action, args: {}, urlBefore: 'about:blank', urlAfter: 'about:blank', outcome: 'ok' as const, at: new Date().toISOString() });
    expect(await store.recordings.addMany(owner, [step(0, 'a'), step(1, 'b')])).toBe(2);
    // another worker took place 3 meanwhile
    expect(await store.recordings.add(owner, step(3, 'theirs'))).toBe(true);
    expect(await store.recordings.addMany(owner, [step(2, 'c'), step(3, 'd'), step(4, 'e')])).toBe(1);
    expect((await store.recordings.list(owner.taskId, owner.userId)).map((s) => [s.seq, s.action])).toEqual([
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
      [3, 'theirs'],
    ]);
    expect(await store.recordings.nextSeq(owner.taskId)).toBe(4);
  });
});
