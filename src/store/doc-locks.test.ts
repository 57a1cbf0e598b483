import type { Db } from 'mongodb';
import { DocLocks } from './doc-locks';

/** The `locks` collection as DocLocks uses it: inserts by `_id` refused as duplicates (11000), every call counted. */
function fakeDb(name = 'app') {
  const docs = new Map<string, { _id: string; owner: string; at: Date }>();
  const calls = { insert: 0, refused: 0, find: 0, delete: 0 };
  const col = {
    dbName: name,
    async insertOne(doc: { _id: string; owner: string; at: Date }) {
      calls.insert++;
      await new Promise((r) => setImmediate(r));
      if (docs.has(doc._id)) {
        calls.refused++;
        throw Object.assign(new Error('E11000 duplicate key'), { code: 11000 });
      }
      docs.set(doc._id, doc);
    },
    async findOne(q: { _id: string }) {
      calls.find++;
      return docs.get(q._id) ?? null;
    },
    async deleteOne(q: { _id: string; owner: string }) {
      calls.delete++;
      const d = docs.get(q._id);
      if (d && d.owner === q.owner) docs.delete(q._id);
      return { deletedCount: d ? 1 : 0 };
    },
  };
  return { db: { collection: () => col } as unknown as Db, calls, docs };
}

const hold = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('DocLocks', () => {
  it('takers of one process take a lock in turn, one insert each, never two at once', async () => {
    const { db, calls } = fakeDb();
    const locks = new DocLocks(db);
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        locks.with('user:1', async () => {
          inside++;
          most = Math.max(most, inside);
          await hold(5);
          order.push(i);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order).toEqual([...Array(12).keys()]);
    // No polling of the database: every taker inserted once and found it free.
    expect(calls).toMatchObject({ insert: 12, refused: 0, find: 0, delete: 12 });
  });

  it('two stores of one process share the turn of a key; other keys and databases do not wait', async () => {
    const a = fakeDb('app');
    const first = new DocLocks(a.db);
    const second = new DocLocks(a.db);
    const other = new DocLocks(fakeDb('other').db);
    const seen: string[] = [];
    const slow = first.with('storage:u', async () => {
      await hold(60);
      seen.push('first');
    });
    await hold(1);
    await Promise.all([
      second.with('storage:u', async () => void seen.push('second')),
      first.with('storage:v', async () => void seen.push('other key')),
      other.with('storage:u', async () => void seen.push('other database')),
      slow,
    ]);
    expect(seen.indexOf('other key')).toBeLessThan(seen.indexOf('first'));
    expect(seen.indexOf('other database')).toBeLessThan(seen.indexOf('first'));
    expect(seen.indexOf('second')).toBeGreaterThan(seen.indexOf('first'));
    expect(a.calls.refused).toBe(0);
  });

  it('a holder of another process is still waited for in the database, and a failing turn lets the next go', async () => {
    const { db, docs, calls } = fakeDb();
    docs.set('user:1', { _id: 'user:1', owner: 'elsewhere', at: new Date() });
    const locks = new DocLocks(db);
    setTimeout(() => docs.delete('user:1'), 80);
    const failing = locks.with('user:1', async () => {
      throw new Error('boom');
    });
    const next = locks.with('user:1', async () => 'done');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('done');
    expect(calls.refused).toBeGreaterThan(0);
    expect(docs.size).toBe(0);
  });

  it('taking a lock again inside its own turn waits as long as a stale lock, then goes on (as before)', async () => {
    const { db } = fakeDb();
    const locks = new DocLocks(db, { staleMs: 100, waitMs: 2_000 });
    const t0 = Date.now();
    const inner = await locks.with('k', () => locks.with('k', async () => 'inner'));
    expect(inner).toBe('inner');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
  });
});
