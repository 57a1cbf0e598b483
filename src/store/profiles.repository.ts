import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './doc-locks';
import { newId } from './ids';
import { PROFILE_COLLECTION, UPLOAD_LOCKS, UPLOAD_STALE_MS } from './profile-locks';

export type ArchiveStatus = 'empty' | 'uploading' | 'ready';

/** An upload streaming in: the status to go back to if it fails. */
export interface PendingUpload {
  id: string;
  previousStatus: Exclude<ArchiveStatus, 'uploading'>;
  startedAt: Date;
}

/** What environments and profiles share: a browser profile archive in blob storage. */
export interface ArchiveRecord {
  _id: string;
  userId: string;
  name: string;
  description: string;
  status: ArchiveStatus;
  blobId: string | null;
  blobSize: number | null;
  blobUploadedAt: Date | null;
  upload: PendingUpload | null;
  /** The record's place among the user's `limit` (unique per user: the limit holds under concurrency). */
  slot: number;
  /** The live session running on this profile (see ProfileLocks). */
  lockedBy?: string | null;
  lastUsedAt: Date | null;
  usageCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export type BeginUpload = { ok: true; record: ArchiveRecord; uploadId: string } | { ok: false; reason: 'missing' | 'uploading' | 'in_use' };

/** One upload at a time per record: the document exists while an upload streams. */
interface UploadLock {
  _id: string;
  uploadId: string;
  startedAt: Date;
}


/**
 * Records holding a profile archive. An upload marks the record `uploading` and remembers
 * the status it had; success swaps the blob in, failure puts the status back, so the
 * previous archive stays usable throughout.
 *
 * FerretDB 1.x on SQLite applies an update as read, change, write back the whole document,
 * with nothing in between held: two concurrent conditional updates can both pass their
 * filter, and a concurrent update of another field can be lost. What must hold under
 * concurrency therefore rests on inserts, which a unique index makes atomic: the per-user
 * limit on a unique (userId, slot) index, the one-upload-at-a-time rule on a lock document
 * keyed by the record. The blob swap is written, read back and rewritten if lost.
 */
export class ArchiveRecords<R extends ArchiveRecord> {
  /** Typed as the shared fields: the subclasses' own fields go through their own collection handle. */
  protected readonly col: Collection<ArchiveRecord>;
  private readonly locks: Collection<UploadLock>;
  /** The live sessions' locks (see ProfileLocks): no upload while a session runs on the profile. */
  private readonly sessionLocks: Collection<{ _id: string }>;
  private readonly kind: 'environment' | 'profile';
  private indexed?: Promise<unknown>;
  constructor(
    db: Db,
    private readonly collection: string,
    private readonly idPrefix: string,
    /** An upload older than this is taken to be dead (its API process stopped) and may be replaced. */
    protected readonly staleUploadMs = UPLOAD_STALE_MS,
  ) {
    this.col = db.collection<ArchiveRecord>(collection);
    this.locks = db.collection<UploadLock>(UPLOAD_LOCKS);
    this.sessionLocks = db.collection<{ _id: string }>('profileLocks');
    this.kind = collection === PROFILE_COLLECTION.environment ? 'environment' : 'profile';
  }

  /** The unique (userId, slot) index the per-user limit rests on; created on first use too. */
  ensureIndexes(): Promise<unknown> {
    this.indexed ??= (async () => {
      // Records from before slots existed get one, so the unique index can be built.
      const unslotted = await this.col.find({ slot: { $exists: false } }, { projection: { userId: 1 } }).toArray();
      for (const r of unslotted) {
        const used = new Set((await this.col.find({ userId: r.userId, slot: { $exists: true } }, { projection: { slot: 1 } }).toArray()).map((d) => d.slot));
        let slot = 0;
        while (used.has(slot)) slot++;
        await this.col.updateOne({ _id: r._id }, { $set: { slot } });
      }
      await this.col.createIndex({ userId: 1, slot: 1 }, { unique: true });
    })().catch((err) => {
      this.indexed = undefined;
      throw err;
    });
    return this.indexed;
  }

  /** Inserts into the first free slot of the user's `limit`; null when all are taken. */
  protected async insertWithin(userId: string, fields: Omit<R, keyof ArchiveRecord> & { name: string; description?: string }, limit: number): Promise<R | null> {
    await this.ensureIndexes();
    const used = new Set((await this.col.find({ userId }, { projection: { slot: 1 } }).toArray()).map((d) => d.slot));
    const now = new Date();
    for (let slot = 0; slot < limit; slot++) {
      if (used.has(slot)) continue;
      const record = {
        ...fields,
        _id: newId(this.idPrefix),
        userId,
        slot,
        name: fields.name,
        description: fields.description ?? '',
        status: 'empty',
        blobId: null,
        blobSize: null,
        blobUploadedAt: null,
        upload: null,
        lockedBy: null,
        lastUsedAt: null,
        usageCount: 0,
        createdAt: now,
        updatedAt: now,
      } as unknown as R;
      try {
        await this.col.insertOne(record as unknown as ArchiveRecord);
        return record;
      } catch (err) {
        // Taken meanwhile by a concurrent create: try the next one.
        if (!isDuplicateKey(err)) throw err;
      }
    }
    return null;
  }

  get(id: string, userId: string): Promise<R | null> {
    return this.col.findOne({ _id: id, userId }) as Promise<R | null>;
  }

  /** Whoever owns it: for signed links and workers, which act for the owner already. */
  byId(id: string): Promise<R | null> {
    return this.col.findOne({ _id: id }) as Promise<R | null>;
  }

  list(userId: string): Promise<R[]> {
    return this.col.find({ userId }).sort({ createdAt: 1, _id: 1 }).toArray() as Promise<R[]>;
  }

  countForUser(userId: string): Promise<number> {
    return this.col.countDocuments({ userId });
  }

  /** Removes the record; the caller deletes its blob (and anything else it owns). */
  async remove(id: string, userId: string): Promise<R | null> {
    const gone = (await this.col.findOneAndDelete({ _id: id, userId })) as R | null;
    if (gone) await this.locks.deleteOne({ _id: this.lockId(id) });
    return gone;
  }

  private lockId(id: string): string {
    return `${this.collection}:${id}`;
  }

  /** Takes the record's upload lock; a lock older than the stale time is taken over. */
  private async takeLock(id: string, uploadId: string, now: Date): Promise<boolean> {
    const lock: UploadLock = { _id: this.lockId(id), uploadId, startedAt: now };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.locks.insertOne(lock);
        return true;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const held = await this.locks.findOne({ _id: lock._id });
      if (held && held.startedAt.getTime() > now.getTime() - this.staleUploadMs) return false;
      if (held) await this.locks.deleteOne({ _id: lock._id, uploadId: held.uploadId });
    }
    return false;
  }

  private async holdsLock(id: string, uploadId: string): Promise<boolean> {
    return (await this.locks.findOne({ _id: this.lockId(id) }))?.uploadId === uploadId;
  }

  private async releaseLock(id: string, uploadId: string): Promise<void> {
    await this.locks.deleteOne({ _id: this.lockId(id), uploadId });
  }

  /**
   * Marks the record `uploading`; refused while another upload streams or a session holds
   * the profile. The upload's lock is taken first and the session's looked for second (a
   * session does the reverse, see ProfileLocks), so an upload and a session starting
   * together never both go ahead.
   */
  async beginUpload(id: string, userId: string, now = new Date()): Promise<BeginUpload> {
    const cur = (await this.get(id, userId)) as ArchiveRecord | null;
    if (!cur) return { ok: false, reason: 'missing' };
    const uploadId = newId('upl', 8);
    if (!(await this.takeLock(id, uploadId, now))) return { ok: false, reason: 'uploading' };
    if (cur.lockedBy || (await this.sessionLocks.findOne({ _id: `${this.kind}:${id}` }))) {
      await this.releaseLock(id, uploadId);
      return { ok: false, reason: 'in_use' };
    }
    // A dead upload left its mark: the status to return to is the one it remembered.
    const previousStatus = cur.upload ? cur.upload.previousStatus : (cur.status as PendingUpload['previousStatus']);
    const res = await this.col.updateOne({ _id: id, userId }, { $set: { status: 'uploading', upload: { id: uploadId, previousStatus, startedAt: now } } });
    if (res.matchedCount === 0) {
      await this.releaseLock(id, uploadId);
      return { ok: false, reason: 'missing' };
    }
    return { ok: true, record: cur, uploadId };
  }

  /**
   * Swaps the new archive in and releases the upload. Answers the record and the blob it
   * replaced, or null when the upload lost its record (deleted, or the upload was taken
   * over as stale): the caller then deletes the new blob.
   */
  async finishUpload(id: string, uploadId: string, blob: { blobId: string; size: number }, now = new Date()): Promise<{ record: R; replacedBlobId: string | null } | null> {
    if (!(await this.holdsLock(id, uploadId))) return null;
    try {
      const before = await this.col.findOne({ _id: id });
      if (!before) return null;
      const set: Partial<ArchiveRecord> = { status: 'ready', blobId: blob.blobId, blobSize: blob.size, blobUploadedAt: now, upload: null, updatedAt: now };
      for (let attempt = 0; attempt < 5; attempt++) {
        const res = await this.col.updateOne({ _id: id }, { $set: set });
        if (res.matchedCount === 0) return null;
        // Read back: a concurrent write of another field may have put the old document back.
        const after = await this.col.findOne({ _id: id });
        if (!after) return null;
        if (after.blobId === blob.blobId && after.status === 'ready') return { record: after as R, replacedBlobId: before.blobId };
      }
      throw new Error(`The new archive of ${this.collection} ${id} could not be recorded`);
    } finally {
      await this.releaseLock(id, uploadId);
    }
  }

  /** Puts the status the record had before the upload back; the archive was never touched. */
  async abortUpload(id: string, uploadId: string): Promise<void> {
    if (!(await this.holdsLock(id, uploadId))) return;
    try {
      const cur = await this.col.findOne({ _id: id });
      if (cur?.upload?.id === uploadId) await this.col.updateOne({ _id: id }, { $set: { status: cur.upload.previousStatus, upload: null } });
    } finally {
      await this.releaseLock(id, uploadId);
    }
  }

  /** The sweeper's part: uploads whose API process died go back to their previous status. */
  async recoverStaleUploads(now = new Date()): Promise<number> {
    const stale = await this.col.find({ 'upload.startedAt': { $lt: new Date(now.getTime() - this.staleUploadMs) } }).toArray();
    let n = 0;
    for (const r of stale) {
      const lock = await this.locks.findOne({ _id: this.lockId(r._id) });
      // Taken over by a live upload meanwhile: that one owns the record now.
      if (lock && lock.uploadId !== r.upload!.id && lock.startedAt.getTime() > now.getTime() - this.staleUploadMs) continue;
      const res = await this.col.updateOne({ _id: r._id, 'upload.id': r.upload!.id }, { $set: { status: r.upload!.previousStatus, upload: null } });
      if (lock) await this.locks.deleteOne({ _id: lock._id, uploadId: lock.uploadId });
      n += res.modifiedCount;
    }
    return n;
  }

  /**
   * For the worker when a session on the profile ends: the archive of its directory
   * replaces the stored one (null when the session only used it), and the use is counted.
   * Answers the blob that was replaced, for the caller to delete, or null if the record is gone.
   */
  async recordSession(id: string, userId: string, blob: { blobId: string; size: number } | null, now = new Date()): Promise<{ record: R; replacedBlobId: string | null } | null> {
    const before = await this.col.findOne({ _id: id, userId });
    if (!before) return null;
    const set: Partial<ArchiveRecord> = { lastUsedAt: now, updatedAt: now, usageCount: (before.usageCount ?? 0) + 1 };
    if (blob) Object.assign(set, { status: 'ready', blobId: blob.blobId, blobSize: blob.size, blobUploadedAt: now, upload: null });
    for (let attempt = 0; attempt < 5; attempt++) {
      if ((await this.col.updateOne({ _id: id, userId }, { $set: set })).matchedCount === 0) return null;
      // Read back, as finishUpload does: a concurrent write may have put the old document back.
      const after = await this.col.findOne({ _id: id });
      if (!after) return null;
      if (!blob || after.blobId === blob.blobId) return { record: after as R, replacedBlobId: blob && before.blobId !== blob.blobId ? before.blobId : null };
    }
    throw new Error(`The archive of ${this.collection} ${id} could not be recorded`);
  }

  /** Blob ids among `blobIds` that a record of this collection refers to. */
  async referencedBlobs(blobIds: string[]): Promise<Set<string>> {
    const docs = await this.col.find({ blobId: { $in: blobIds } }, { projection: { blobId: 1 } }).toArray();
    return new Set(docs.map((d) => (d as unknown as ArchiveRecord).blobId!).filter(Boolean));
  }
}

export type ProfileRecord = ArchiveRecord;

/** Browser profiles of a user (`/profiles`): name ≤ 100, description ≤ 500, 20 per user. */
export class ProfilesRepository extends ArchiveRecords<ProfileRecord> {
  constructor(db: Db) {
    super(db, 'profiles', 'prof');
  }

  create(userId: string, fields: { name: string; description?: string }, limit: number): Promise<ProfileRecord | null> {
    return this.insertWithin(userId, fields, limit);
  }
}
