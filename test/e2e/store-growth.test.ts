/**
 * What keeps the store's cost flat as data grows, against the test database itself
 * (FerretDB here): lookups by `_id` go through the `_id` index, and a session's timeline is
 * dated and deleted without reading every stored event.
 */
import { MongoClient, type Db } from 'mongodb';
import { EventsRepository } from '../../src/store/events.repository';
import { isEmbeddedFerretDb } from '../../src/store/mongo';

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
