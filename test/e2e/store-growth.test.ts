/**
 * What keeps the store's cost flat as data grows, against the test database itself
 * (FerretDB here): lookups by `_id` go through the `_id` index, and a session's timeline is
 * dated and deleted without reading every stored event.
 */
import { MongoClient, type Db } from 'mongodb';
import { EventsRepository } from '../../src/store/events.repository';
import { isEmbeddedFerretDb } from '../../src/store/mongo';
import { Readable } from 'node:stream';
import { runRetentionSweep } from '../../src/store/retention';
import { createStore, type Store } from '../../src/store/store';

let mongo: MongoClient;
let db: Db;

beforeAll(async () => {
  mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test');
  db = mongo.db(`store_growth_${Date.now()}`);
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await mongo.close();
});

describe('as data grows', () => {
  it('finds, updates and deletes by _id through the _id index', async () => {
    if (!(await isEmbeddedFerretDb(db))) return; // MongoDB always does
    const tasks = db.collection<{ _id: string; n: number }>('tasks');
    await tasks.insertMany(Array.from({ length: 200 }, (_, i) => ({ _id: `task_${i}`, n: i })));
    // FerretDB's explain carries SQLite's plan for the query it runs for finds, updates and deletes alike
    const explained = await db.command({ explain: { find: 'tasks', filter: { _id: 'task_150' } } });
    const plan = JSON.stringify(explained.queryPlanner);
    expect(plan).toContain('USING INDEX');
    expect(plan).not.toMatch(/detail=SCAN/);
    // and the answers are the same as a scan would give
    expect(await tasks.findOne({ _id: 'task_150' })).toEqual({ _id: 'task_150', n: 150 });
    expect((await tasks.updateOne({ _id: 'task_7' }, { $set: { n: -7 } })).modifiedCount).toBe(1);
    expect(await tasks.findOne({ _id: 'task_7' })).toEqual({ _id: 'task_7', n: -7 });
    expect((await tasks.deleteOne({ _id: 'task_8' })).deletedCount).toBe(1);
    expect(await tasks.findOne({ _id: 'task_8' })).toBeNull();
    expect((await tasks.updateOne({ _id: 'task_new' }, { $set: { n: 1 } }, { upsert: true })).upsertedId).toBe('task_new');
    expect(await tasks.countDocuments({})).toBe(200);
  });

  it("dates a session's timeline in one small record and deletes only what is past its date", async () => {
    const events = new EventsRepository(db);
    const entry = (sessionId: string, i: number) => ({ sessionId, event: 'message' as const, payload: { type: 'response_update', data: { message: `m${i}` } }, timestamp: i });
    for (let i = 0; i < 7; i++) await events.appendNext(entry('ses_ended', i));
    for (let i = 0; i < 3; i++) await events.appendNext(entry('ses_later', i));
    for (let i = 0; i < 2; i++) await events.appendNext(entry('ses_live', i));
    // an event dated on its own, as older versions did
    await db.collection('events').insertOne({ _id: 'ses_old:000000001' as never, sessionId: 'ses_old', seq: 1, event: 'message', payload: {}, timestamp: 1, expiresAt: new Date(Date.now() - 1000) });

    const now = new Date();
    await events.markExpiry('ses_ended', new Date(now.getTime() - 1));
    await events.markExpiry('ses_later', new Date(now.getTime() + 60 * 60 * 1000));
    // the events themselves are not rewritten
    expect(await db.collection('events').countDocuments({ expiresAt: { $exists: true } })).toBe(1);

    expect(await events.sweep(now)).toBe(7 + 1);
    expect(await events.latestSeq('ses_ended')).toBe(0);
    expect(await db.collection('events').countDocuments({ sessionId: 'ses_old' })).toBe(0);
    expect((await events.after('ses_later', 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((await events.after('ses_live', 0)).map((e) => e.seq)).toEqual([1, 2]);
    // nothing is left to do until the next date passes; then that timeline goes too
    expect(await events.sweep(now)).toBe(0);
    expect(await events.sweep(new Date(now.getTime() + 2 * 60 * 60 * 1000))).toBe(3);
    expect(await events.latestSeq('ses_later')).toBe(0);
    expect(await events.latestSeq('ses_live')).toBe(2);
    expect(await db.collection('eventExpiries').countDocuments({})).toBe(0);
  });

  it("reads a session's events after a seq, in order and within the limit", async () => {
    const events = new EventsRepository(db);
    for (let i = 0; i < 150; i++) await events.appendNext({ sessionId: 'ses_read', event: 'message', payload: { type: 'agent', content: `c${i}` }, timestamp: i } as never);
    await events.appendNext({ sessionId: 'ses_other', event: 'message', payload: { type: 'agent', content: 'x' }, timestamp: 1 } as never);
    const all = await events.after('ses_read', 0);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
    expect(all[149]).toEqual({ sessionId: 'ses_read', seq: 150, event: 'message', payload: { type: 'agent', content: 'c149' }, timestamp: 149 });
    expect((await events.after('ses_read', 100, 20)).map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 101));
    expect((await events.after('ses_read', 140, 1000)).map((e) => e.seq)).toEqual([141, 142, 143, 144, 145, 146, 147, 148, 149, 150]);
    expect(await events.after('ses_read', 150)).toEqual([]);
    expect(await events.after('ses_none', 0)).toEqual([]);
  });

  it('a sweep broken off halfway leaves seqs 1..k, which the next sweep finds and deletes', async () => {
    const events = new EventsRepository(db);
    for (let i = 0; i < 12; i++) await events.appendNext({ sessionId: 'ses_half', event: 'message', payload: { type: 'agent', content: `c${i}` }, timestamp: i } as never);
    // what deleting newest first leaves when stopped after the first few
    await db.collection('events').deleteMany({ sessionId: 'ses_half', seq: { $gt: 5 } });
    await events.markExpiry('ses_half', new Date(Date.now() - 1));
    expect(await new EventsRepository(db).sweep(new Date())).toBe(5);
    expect(await db.collection('events').countDocuments({ sessionId: 'ses_half' })).toBe(0);
  });
});

describe("the records' retention", () => {
  const DAY = 24 * 60 * 60 * 1000;
  const old = new Date(Date.now() - 40 * DAY);
  const cutoff = new Date(Date.now() - 30 * DAY);

  /** A session with two tasks, each with a recording of three steps and a step picture, events and saved state. */
  async function sessionWithRecords(store: Store, sessionId: string, session: Record<string, unknown>): Promise<string[]> {
    await db.collection('sessions').insertOne({ _id: sessionId as never, userId: 'usr_r', holdsSlot: false, createdAt: old, updatedAt: old, ...session });
    const taskIds = [`${sessionId}_t1`, `${sessionId}_t2`];
    for (const taskId of taskIds) {
      await db.collection('tasks').insertOne({ _id: taskId as never, sessionId, userId: 'usr_r', status: 'task_completed', createdAt: old, updatedAt: old });
      const owner = { userId: 'usr_r', sessionId, taskId };
      await store.recordings.begin(owner, { prompt: 'p', startingUrl: null, outputType: 'text' });
      const step = (seq: number) => ({ seq, by: 'agent' as const, action: 'click_element', args: {}, urlBefore: 'https://a.test/', urlAfter: 'https://a.test/', outcome: 'ok' as const, at: old.toISOString() });
      await store.recordings.addMany(owner, [step(0), step(1), step(2)]);
      const blob = await store.blobs.put(Readable.from([Buffer.from('jpeg')]), { filename: 'step-001.jpg', contentType: 'image/jpeg', userId: 'usr_r', maxBytes: 1000, kind: 'picture' });
      await store.files.createFromBlob({ userId: 'usr_r', blob, originalName: 'step-001.jpg', kind: 'picture', sessionId, taskId, expiresAt: null });
    }
    for (let i = 0; i < 3; i++) await store.events.appendNext({ sessionId, event: 'message', payload: { type: 'response_update', data: { message: `m${i}` } }, timestamp: i });
    await db.collection('sessionMasks').insertOne({ _id: sessionId as never, sealed: 'x', takenAt: old });
    return taskIds;
  }

  async function countsOf(sessionId: string, taskIds: string[]) {
    return {
      sessions: await db.collection('sessions').countDocuments({ _id: sessionId as never }),
      tasks: await db.collection('tasks').countDocuments({ sessionId }),
      recordings: await db.collection('recordings').countDocuments({ sessionId }),
      steps: await db.collection('recording_steps').countDocuments({ sessionId }),
      pictures: await db.collection('files').countDocuments({ taskId: { $in: taskIds } }),
      events: await db.collection('events').countDocuments({ sessionId }),
      masks: await db.collection('sessionMasks').countDocuments({ _id: sessionId as never }),
    };
  }
  const none = { sessions: 0, tasks: 0, recordings: 0, steps: 0, pictures: 0, events: 0, masks: 0 };
  const all = { sessions: 1, tasks: 2, recordings: 2, steps: 6, pictures: 2, events: 3, masks: 1 };

  it('deletes what ended before the cutoff, with its children and blobs, and leaves live and recent sessions', async () => {
    const store = createStore(db);
    const ended = await sessionWithRecords(store, 'ses_rt_ended', { status: 'terminated', endedAt: old });
    const noDate = await sessionWithRecords(store, 'ses_rt_nodate', { status: 'expired' });
    const recent = await sessionWithRecords(store, 'ses_rt_recent', { status: 'completed', endedAt: new Date() });
    const live = await sessionWithRecords(store, 'ses_rt_live', { status: 'active' });
    const orphaned = await sessionWithRecords(store, 'ses_rt_orphaned', { status: 'orphaned' });
    const blobIds = (await db.collection('files').find({ taskId: { $in: ended } }).toArray()).map((f) => f.blobId as string);
    await db.collection('triggerRuns').insertMany([
      { _id: 'run_rt_old' as never, cronJobId: 'cron_rt', status: 'completed', finishedAt: old, createdAt: old },
      { _id: 'run_rt_running' as never, cronJobId: 'cron_rt', status: 'running', finishedAt: null, createdAt: old },
    ]);

    const gone = await runRetentionSweep(store, cutoff);
    expect(gone).toEqual({ sessions: 2, tasks: 4, steps: 12, pictures: 4, events: 6, triggerRuns: 1 });
    expect(await countsOf('ses_rt_ended', ended)).toEqual(none);
    expect(await countsOf('ses_rt_nodate', noDate)).toEqual(none);
    for (const blobId of blobIds) expect(await store.blobs.stat(blobId)).toBeNull();
    expect(await countsOf('ses_rt_recent', recent)).toEqual(all);
    expect(await countsOf('ses_rt_live', live)).toEqual(all);
    expect(await countsOf('ses_rt_orphaned', orphaned)).toEqual(all);
    expect(await store.tasks.get('ses_rt_ended', 'ses_rt_ended_t1')).toBeNull();
    expect(await store.recordings.list('ses_rt_ended_t1', 'usr_r')).toEqual([]);
    expect(await store.sessions.get('ses_rt_ended')).toBeNull();
    expect(await db.collection('triggerRuns').countDocuments({ _id: { $in: ['run_rt_old', 'run_rt_running'] as never[] } })).toBe(1);
    // a pass with nothing left to do
    expect(await runRetentionSweep(store, cutoff)).toMatchObject({ sessions: 0, triggerRuns: 0 });
  });

  it('takes a bounded batch per pass, and a pass broken off halfway is finished by the next', async () => {
    const store = createStore(db);
    const a = await sessionWithRecords(store, 'ses_rt_a', { status: 'failed', endedAt: old });
    const b = await sessionWithRecords(store, 'ses_rt_b', { status: 'terminated', endedAt: old });
    // broken off: one task's recording and pictures gone, the other's steps partly, the session still there
    await store.recordings.deleteOfTask(a[0]);
    await store.files.deletePicturesOfTasks([a[0]]);
    await db.collection('recording_steps').deleteOne({ _id: `${a[1]}:000002` as never });
    expect((await store.recordings.list(a[1], 'usr_r')).map((s) => s.seq)).toEqual([0, 1]);

    expect(await runRetentionSweep(store, cutoff, { batch: 1 })).toMatchObject({ sessions: 1 });
    expect(await runRetentionSweep(store, cutoff, { batch: 1 })).toMatchObject({ sessions: 1 });
    expect(await countsOf('ses_rt_a', a)).toEqual(none);
    expect(await countsOf('ses_rt_b', b)).toEqual(none);
  });
});

