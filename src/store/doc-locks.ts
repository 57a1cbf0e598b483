import { randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { atMost } from '../at-most';

interface LockDoc {
  _id: string;
  owner: string;
  at: Date;
}

export class LockTimeoutError extends Error {
  constructor(key: string, waitedMs: number) {
    super(`Could not lock ${key} within ${waitedMs} ms`);
  }
}

/** A write refused by a unique index (MongoDB and FerretDB answer code 11000). */
export const isDuplicateKey = (err: unknown): boolean => (err as { code?: number })?.code === 11000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Per database and key, the last of this process's holders and waiters: a taker waits for
 * the one before it here, in memory, before it asks the database. Many tasks of one process
 * that want the same lock (one user's sessions on a worker) then take it in turn with one
 * insert each, instead of all polling the database until it is free.
 */
const localTails = new Map<string, Promise<void>>();

/**
 * Short mutual exclusion across processes, for read-change-write of one document.
 *
 * FerretDB 1.x on SQLite applies an update as read, change, write back the whole document
 * with nothing held in between: concurrent `$inc`s are lost and two guarded updates can both
 * pass their guard. Inserts and deletes by `_id` are atomic there (and on MongoDB), so a
 * lock is a document: inserted to take it, deleted to release it. A holder that died leaves
 * its lock behind; after `staleMs` it is taken over.
 */
export class DocLocks {
  private readonly col: Collection<LockDoc>;
  constructor(
    db: Db,
    private readonly opts: { staleMs?: number; waitMs?: number } = {},
  ) {
    this.col = db.collection<LockDoc>('locks');
  }

  async with<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const owner = randomBytes(8).toString('hex');
    const start = Date.now();
    const local = `${this.col.dbName}\0${key}`;
    const before = localTails.get(local);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    localTails.set(local, released);
    try {
      // The one before here goes first. Waited for no longer than a lock may be held: a
      // holder that takes the lock again inside its own turn is then treated as the
      // database treats it (its lock is stale and taken over), never waited for forever.
      if (before) await atMost(before, this.opts.staleMs ?? 15_000);
      await this.acquire(key, owner, start);
      try {
        return await fn();
      } finally {
        await this.col.deleteOne({ _id: key, owner });
      }
    } finally {
      release();
      if (localTails.get(local) === released) localTails.delete(local);
    }
  }

  private async acquire(key: string, owner: string, start: number): Promise<void> {
    const staleMs = this.opts.staleMs ?? 15_000;
    const waitMs = this.opts.waitMs ?? 20_000;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.col.insertOne({ _id: key, owner, at: new Date() });
        return;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const held = await this.col.findOne({ _id: key });
      if (held && held.at.getTime() < Date.now() - staleMs) {
        await this.col.deleteOne({ _id: key, owner: held.owner });
        continue;
      }
      if (Date.now() - start > waitMs) throw new LockTimeoutError(key, waitMs);
      await sleep(Math.min(50, 2 + attempt * 3) * (0.5 + Math.random()));
    }
  }
}
