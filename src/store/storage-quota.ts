import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import type { Collection, Db } from 'mongodb';
import { ServiceError } from '../contracts/errors';
import type { BlobInfo, BlobStore } from '../contracts/profiles';
import { DocLocks } from './doc-locks';
import { FileBlobStore } from './file-blobs';
import { newId } from './ids';

/** What the quota needs to know of blob storage: the bytes a user's finished blobs take. */
export interface UsageSource {
  usage(userId: string): Promise<number>;
}

/** Bytes promised to blobs still streaming in, per user. Changed only under the user's storage lock. */
export interface ReservationLedger {
  withUser<T>(userId: string, fn: () => Promise<T>): Promise<T>;
  /** The user's live reservations, in bytes, except `exceptId`. */
  reserved(userId: string, exceptId: string): Promise<number>;
  set(id: string, userId: string, bytes: number): Promise<void>;
  remove(id: string): Promise<void>;
}

/** The ledger of one process (tests, a single-process setup). */
export class MemoryReservationLedger implements ReservationLedger {
  readonly reservations = new Map<string, { userId: string; bytes: number }>();
  private tail = Promise.resolve();

  withUser<T>(_userId: string, fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
  async reserved(userId: string, exceptId: string): Promise<number> {
    return [...this.reservations].filter(([id, r]) => r.userId === userId && id !== exceptId).reduce((sum, [, r]) => sum + r.bytes, 0);
  }
  async set(id: string, userId: string, bytes: number): Promise<void> {
    this.reservations.set(id, { userId, bytes });
  }
  async remove(id: string): Promise<void> {
    this.reservations.delete(id);
  }
}

/** A reservation not renewed for this long belongs to a process that died: it no longer counts, and the sweep removes it. */
export const RESERVATION_STALE_MS = 2 * 60 * 60 * 1000;

interface ReservationDoc {
  _id: string;
  userId: string;
  bytes: number;
  at: Date;
}

/**
 * The ledger in MongoDB: one document per reservation, all changes of one user's under a
 * lock document (src/store/doc-locks.ts), since FerretDB 1.x does not apply concurrent
 * updates atomically: reading the user's usage and reservations and writing a new one is
 * one step for everyone else.
 */
export class MongoReservationLedger implements ReservationLedger {
  private readonly col: Collection<ReservationDoc>;
  private readonly locks: DocLocks;
  constructor(db: Db) {
    this.col = db.collection<ReservationDoc>('storageReservations');
    this.locks = new DocLocks(db);
  }

  withUser<T>(userId: string, fn: () => Promise<T>): Promise<T> {
    return this.locks.with(`storage:${userId}`, fn);
  }

  async reserved(userId: string, exceptId: string): Promise<number> {
    const live = await this.col.find({ userId, at: { $gte: new Date(Date.now() - RESERVATION_STALE_MS) } }, { projection: { bytes: 1 } }).toArray();
    return live.filter((r) => r._id !== exceptId).reduce((sum, r) => sum + r.bytes, 0);
  }

  async set(id: string, userId: string, bytes: number): Promise<void> {
    await this.col.updateOne({ _id: id }, { $set: { userId, bytes, at: new Date() } }, { upsert: true });
  }

  async remove(id: string): Promise<void> {
    await this.col.deleteOne({ _id: id });
  }

  /** The sweep's part: reservations of processes that died. */
  async sweepStale(now = new Date()): Promise<number> {
    return (await this.col.deleteMany({ at: { $lt: new Date(now.getTime() - RESERVATION_STALE_MS) } })).deletedCount;
  }
}

const MB = 1024 * 1024;
export const formatBytes = (n: number): string => (n % MB === 0 ? `${n / MB} MB` : n % 1024 === 0 ? `${n / 1024} KB` : `${n} bytes`);

export const quotaExceeded = (limit: number, message = `Storage quota of ${formatBytes(limit)} reached; delete files or profiles first`) =>
  new ServiceError('STORAGE_QUOTA_EXCEEDED', message, { limit });

/** The first reservation of a stream; it doubles as bytes arrive. */
const FIRST_GRANT = 256 * 1024;
/** Near the quota a stream is granted what it needs and this much more, so it leaves the rest to others. */
const SCARCE_STEP = 64 * 1024;

/**
 * Every user's cap on blob storage (USER_STORAGE_MAX_BYTES). A blob reserves its bytes
 * before they are stored: a first grant before the stream starts, more as it grows, each
 * under the user's lock and counted against finished blobs and every other reservation.
 * So uploads, downloads and archives streaming in parallel never add up past the cap.
 */
export class StorageQuota {
  constructor(private readonly deps: { usage: UsageSource; ledger: ReservationLedger; limitBytes: number }) {}

  get limitBytes(): number {
    return this.deps.limitBytes;
  }

  /** Bytes the user's streams in flight have reserved. */
  reservedBy(userId: string): Promise<number> {
    return this.deps.ledger.reserved(userId, '');
  }

  /**
   * Opens a reservation for one blob of at most `perFile` bytes; `freedOnSuccess` is what
   * the blob replaces (an archive's previous version), counted as free. Throws 413
   * STORAGE_QUOTA_EXCEEDED when nothing is left.
   */
  async reserve(userId: string, opts: { perFile: number; freedOnSuccess?: number }): Promise<QuotaReservation> {
    const reservation = new QuotaReservation(this.deps.ledger, userId, newId('rsv'), opts.perFile, async (exceptId) => {
      const used = (await this.deps.usage.usage(userId)) + (await this.deps.ledger.reserved(userId, exceptId));
      return this.deps.limitBytes - used + (opts.freedOnSuccess ?? 0);
    });
    if (!(await reservation.grow(Math.min(FIRST_GRANT, opts.perFile), 1))) {
      throw quotaExceeded(this.deps.limitBytes);
    }
    return reservation;
  }
}

export class QuotaReservation {
  /** Bytes this blob may store so far. */
  granted = 0;
  constructor(
    private readonly ledger: ReservationLedger,
    private readonly userId: string,
    readonly id: string,
    private readonly perFile: number,
    private readonly available: (exceptId: string) => Promise<number>,
  ) {}

  /**
   * Asks for `want` bytes in all, and for at least `need`: grants `want` when it is free,
   * else `need` and a little more. False (nothing changed) when not even `need` is free.
   */
  async grow(want: number, need: number): Promise<boolean> {
    return this.ledger.withUser(this.userId, async () => {
      const free = await this.available(this.id);
      if (free < need) return false;
      this.granted = Math.max(this.granted, free >= want ? want : Math.min(free, need + SCARCE_STEP));
      await this.ledger.set(this.id, this.userId, this.granted);
      return true;
    });
  }

  /**
   * The bytes of the blob pass through here on their way to storage; past what is granted
   * the stream waits for more, and fails with 413 STORAGE_QUOTA_EXCEEDED when the quota
   * has none. Past `perFile` it lets bytes through: the blob store's own cap refuses them.
   */
  meter(onExceeded: () => Error): Transform {
    let seen = 0;
    return new Transform({
      transform: (chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) => {
        seen += chunk.length;
        if (seen <= this.granted || seen > this.perFile) return cb(null, chunk);
        const want = Math.min(this.perFile, Math.max(seen, this.granted * 2));
        this.grow(want, seen).then(
          (ok) => (ok ? cb(null, chunk) : cb(onExceeded())),
          (err: Error) => cb(err),
        );
      },
    });
  }

  /** Once the blob is stored (it counts as usage now) or failed: the reservation goes. */
  async release(): Promise<void> {
    await this.ledger.remove(this.id);
  }
}

/**
 * Stores one blob of a user under `perFile` and the user's quota: its bytes are reserved
 * before the first is stored and as they arrive; the reservation goes once the blob counts
 * as usage (or failed). Fails with 413 PAYLOAD_TOO_LARGE past `perFile`, 413
 * STORAGE_QUOTA_EXCEEDED past the quota (`quotaMessage` words it).
 */
export async function putWithinQuota(
  storage: { blobs: BlobStore; quota: StorageQuota },
  input: Readable,
  meta: { filename: string; contentType: string; userId: string; kind: string; perFile: number; freedOnSuccess?: number; quotaMessage?: string },
): Promise<BlobInfo> {
  const limit = storage.quota.limitBytes;
  let reservation: QuotaReservation;
  try {
    reservation = await storage.quota.reserve(meta.userId, { perFile: meta.perFile, freedOnSuccess: meta.freedOnSuccess });
  } catch (err) {
    input.destroy();
    throw err;
  }
  try {
    const metered = reservation.meter(() => quotaExceeded(limit, meta.quotaMessage));
    pipeline(input, metered, () => undefined);
    return await storage.blobs.put(metered, { filename: meta.filename, contentType: meta.contentType, userId: meta.userId, maxBytes: meta.perFile, kind: meta.kind });
  } finally {
    await reservation.release();
  }
}

/**
 * A blob whose bytes are all in hand (a step picture), stored only within the user's quota.
 * The files store checks and counts it in one step under the user's storage lock (no
 * reservation: half the writes); another store takes a reservation as any stream does.
 */
export async function putWholeWithinQuota(
  storage: { blobs: BlobStore; quota: StorageQuota },
  data: Buffer,
  meta: { filename: string; contentType: string; userId: string; kind: string; perFile: number },
): Promise<BlobInfo> {
  const { blobs, quota } = storage;
  if (blobs instanceof FileBlobStore) {
    return blobs.put(Readable.from([data]), {
      filename: meta.filename,
      contentType: meta.contentType,
      userId: meta.userId,
      kind: meta.kind,
      maxBytes: meta.perFile,
      within: { limit: quota.limitBytes, reserved: (userId) => quota.reservedBy(userId), exceeded: () => quotaExceeded(quota.limitBytes) },
    });
  }
  return putWithinQuota(storage, Readable.from([data]), meta);
}


/**
 * Several blobs whose bytes are all in hand (a task's step pictures), each stored only within
 * the user's quota; undefined in the answer where one did not fit. The files store takes the
 * user's lock and changes the count once for all of them; another store takes them one by one.
 */
export async function putWholeManyWithinQuota(
  storage: { blobs: BlobStore; quota: StorageQuota },
  items: { data: Buffer; filename: string }[],
  meta: { contentType: string; userId: string; kind: string; perFile: number },
): Promise<(BlobInfo | undefined)[]> {
  const { blobs, quota } = storage;
  if (blobs instanceof FileBlobStore) {
    return blobs.putWholeMany(items, { contentType: meta.contentType, userId: meta.userId, kind: meta.kind, maxBytes: meta.perFile, within: { limit: quota.limitBytes, reserved: (userId) => quota.reservedBy(userId) } });
  }
  const out: (BlobInfo | undefined)[] = [];
  for (const item of items) {
    try {
      out.push(await putWholeWithinQuota(storage, item.data, { ...meta, filename: item.filename }));
    } catch (err) {
      if (!(err instanceof ServiceError) || err.status !== 413) throw err;
      out.push(undefined);
    }
  }
  return out;
}
