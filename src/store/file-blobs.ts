import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Collection, Db } from 'mongodb';
import { NotFoundError } from '../contracts/errors';
import type { BlobInfo, BlobStore } from '../contracts/profiles';
import { BLOB_BUCKET, ByteCap, blobIdsBefore, blobUsage, type BlobFileDoc } from './blobs';
import { DocLocks, isDuplicateKey } from './doc-locks';
import { newId } from './ids';

const BLOB_ID = /^blob_[A-Za-z0-9]+$/;
/** The user's storage lock: the same one the reservation ledger takes (src/store/storage-quota.ts), so counts and grants never interleave. */
const usageLock = (userId: string) => `storage:${userId}`;

/**
 * Blobs as files in a directory (BLOB_STORE=files, the embedded default), their records in
 * the same `blobs.files` collection GridFS uses. Reading a blob is one record lookup by id
 * and a file stream, however much is stored: on FerretDB a GridFS read scans the chunks
 * collection, and slows down as it grows. Every process that reads or writes blobs must
 * share the directory (one machine, or one shared volume); deployments across machines
 * use GridFS (BLOB_STORE=gridfs).
 *
 * A blob is written to a temporary name, renamed into place when complete, and only then
 * recorded; a blob past its cap leaves nothing behind.
 *
 * What each user stores is kept as a count (`blobUsage`, by user id) that changes with the
 * records, under the user's lock: the quota reads one document however many blobs there
 * are (summing the records meant reading every user's on FerretDB). A user without a count
 * gets one from the records at the first reading.
 */
export class FileBlobStore implements BlobStore {
  private readonly locks: DocLocks;
  constructor(
    private readonly db: Db,
    private readonly dir: string,
  ) {
    fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true, mode: 0o700 });
    this.locks = new DocLocks(db);
  }

  /**
   * With `within`, the blob is stored only if the user's stored bytes, every open reservation
   * and this blob stay within `limit`, checked under the user's storage lock as the blob is
   * counted: exact without a reservation, for blobs written whole at once (step pictures).
   */
  async put(
    input: Readable,
    meta: { filename: string; contentType: string; userId: string; maxBytes: number; kind: string; within?: { limit: number; reserved: (userId: string) => Promise<number>; exceeded: () => Error } },
  ): Promise<BlobInfo> {
    const blobId = newId('blob');
    const cap = new ByteCap(meta.maxBytes);
    const tmp = path.join(this.dir, 'tmp', `${blobId}.part`);
    const final = this.pathOf(blobId);
    try {
      await pipeline(input, cap, fs.createWriteStream(tmp, { mode: 0o600 }));
      await fs.promises.mkdir(path.dirname(final), { recursive: true });
      await fs.promises.rename(tmp, final);
    } catch (err) {
      await fs.promises.rm(tmp, { force: true });
      throw err;
    }
    const uploadDate = new Date();
    try {
      await this.locks.with(usageLock(meta.userId), async () => {
        const stored = await this.countedUsage(meta.userId);
        if (meta.within && stored + (await meta.within.reserved(meta.userId)) + cap.bytes > meta.within.limit) throw meta.within.exceeded();
        await this.files().insertOne({ _id: blobId, length: cap.bytes, filename: meta.filename, uploadDate, metadata: { userId: meta.userId, kind: meta.kind, contentType: meta.contentType } });
        await this.setCount(meta.userId, stored + cap.bytes);
      });
    } catch (err) {
      await fs.promises.rm(final, { force: true });
      throw err;
    }
    return { blobId, size: cap.bytes, filename: meta.filename, contentType: meta.contentType, userId: meta.userId, createdAt: uploadDate };
  }

  /**
   * Several blobs whose bytes are all in hand (a task's step pictures), stored with one lock
   * and one count: each is written to its file, then those that fit within `within.limit`
   * (in the order given, beside the user's stored bytes and open reservations) are recorded
   * in one insert. Undefined in the answer where a blob did not fit (its file is removed).
   */
  async putWholeMany(
    items: { data: Buffer; filename: string }[],
    meta: { contentType: string; userId: string; maxBytes: number; kind: string; within: { limit: number; reserved: (userId: string) => Promise<number> } },
  ): Promise<(BlobInfo | undefined)[]> {
    // In the order given; undefined where a blob is past the cap (never written).
    const written: ({ blobId: string; size: number; filename: string; final: string } | undefined)[] = [];
    try {
      for (const item of items) {
        if (item.data.length > meta.maxBytes) {
          written.push(undefined);
          continue;
        }
        const blobId = newId('blob');
        const final = this.pathOf(blobId);
        const tmp = path.join(this.dir, 'tmp', `${blobId}.part`);
        try {
          await fs.promises.mkdir(path.dirname(final), { recursive: true });
          await fs.promises.writeFile(tmp, item.data, { mode: 0o600 });
          await fs.promises.rename(tmp, final);
        } catch (err) {
          await fs.promises.rm(tmp, { force: true });
          throw err;
        }
        written.push({ blobId, size: item.data.length, filename: item.filename, final });
      }
    } catch (err) {
      await Promise.all(written.map((w) => w && fs.promises.rm(w.final, { force: true })));
      throw err;
    }
    const uploadDate = new Date();
    const kept = new Set<string>();
    try {
      await this.locks.with(usageLock(meta.userId), async () => {
        const stored = await this.countedUsage(meta.userId);
        let total = stored + (await meta.within.reserved(meta.userId));
        const docs: BlobFileDoc[] = [];
        for (const w of written) {
          if (!w || total + w.size > meta.within.limit) continue;
          total += w.size;
          kept.add(w.blobId);
          docs.push({ _id: w.blobId, length: w.size, filename: w.filename, uploadDate, metadata: { userId: meta.userId, kind: meta.kind, contentType: meta.contentType } });
        }
        if (!docs.length) return;
        await this.files().insertMany(docs);
        await this.setCount(meta.userId, stored + docs.reduce((sum, d) => sum + d.length, 0));
      });
    } catch (err) {
      // Nothing of the batch stays: records an insert may have left go with their files.
      if (kept.size) await this.files().deleteMany({ _id: { $in: [...kept] } }).catch(() => undefined);
      kept.clear();
      throw err;
    } finally {
      await Promise.all(written.map((w) => w && !kept.has(w.blobId) && fs.promises.rm(w.final, { force: true })));
    }
    return written.map((w) => (w && kept.has(w.blobId) ? { blobId: w.blobId, size: w.size, filename: w.filename, contentType: meta.contentType, userId: meta.userId, createdAt: uploadDate } : undefined));
  }

  async get(blobId: string): Promise<Readable> {
    const file = await this.files().findOne({ _id: blobId }, { projection: { _id: 1 } });
    if (!file) throw new NotFoundError('BLOB_NOT_FOUND', 'Blob not found');
    const stream = fs.createReadStream(this.pathOf(blobId));
    // A record whose file is gone is a missing blob, told before any byte is sent.
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', (err) => reject((err as NodeJS.ErrnoException).code === 'ENOENT' ? new NotFoundError('BLOB_NOT_FOUND', 'Blob not found') : err));
    });
    return stream;
  }

  async stat(blobId: string): Promise<BlobInfo | null> {
    const doc = await this.files().findOne({ _id: blobId });
    if (!doc) return null;
    return { blobId, size: doc.length, filename: doc.filename, contentType: doc.metadata?.contentType ?? 'application/octet-stream', userId: doc.metadata?.userId ?? '', createdAt: doc.uploadDate };
  }

  /** Idempotent: deleting an unknown blob is not an error. */
  async delete(blobId: string): Promise<void> {
    const doc = await this.files().findOne({ _id: blobId }, { projection: { length: 1, metadata: 1 } });
    if (doc?.metadata?.userId) {
      const userId = doc.metadata.userId;
      await this.locks.with(usageLock(userId), async () => {
        const stored = await this.countedUsage(userId);
        if ((await this.files().deleteOne({ _id: blobId })).deletedCount === 1) await this.setCount(userId, stored - doc.length);
      });
    } else {
      await this.files().deleteOne({ _id: blobId });
    }
    if (BLOB_ID.test(blobId)) await fs.promises.rm(this.pathOf(blobId), { force: true });
  }

  /** Takes no lock: the reservation ledger asks while it holds the user's storage lock. */
  usage(userId: string): Promise<number> {
    return this.countedUsage(userId);
  }

  /**
   * The user's count, made from the records when there is none yet. Writers make it (under
   * the lock) before their record changes, so a count made by a reader that raced them is
   * refused as a duplicate and the writer's is read.
   */
  private async countedUsage(userId: string): Promise<number> {
    const counted = await this.usageCounts().findOne({ _id: userId });
    if (counted) return counted.bytes;
    const bytes = await blobUsage(this.files(), userId);
    try {
      await this.usageCounts().insertOne({ _id: userId, bytes });
      return bytes;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return (await this.usageCounts().findOne({ _id: userId }))?.bytes ?? bytes;
    }
  }

  /** Sets the user's count (under the user's lock, from what countedUsage read there). */
  private async setCount(userId: string, bytes: number): Promise<void> {
    await this.usageCounts().updateOne({ _id: userId }, { $set: { bytes: Math.max(0, bytes) } });
  }

  private usageCounts(): Collection<{ _id: string; bytes: number }> {
    return this.db.collection<{ _id: string; bytes: number }>('blobUsage');
  }

  idsBefore(before: Date, limit = 500, after?: string): Promise<string[]> {
    return blobIdsBefore(this.files(), before, limit, after);
  }

  /** Blob ids are made here (`blob_` and hex), never taken from a request; still, only that shape becomes a path. */
  private pathOf(blobId: string): string {
    if (!BLOB_ID.test(blobId)) throw new NotFoundError('BLOB_NOT_FOUND', 'Blob not found');
    return path.join(this.dir, blobId.slice(-2), blobId);
  }

  private files() {
    return this.db.collection<BlobFileDoc>(`${BLOB_BUCKET}.files`);
  }
}
