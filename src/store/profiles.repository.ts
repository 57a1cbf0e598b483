import type { Collection, Db } from 'mongodb';
import { newId } from './ids';

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
  /** The live session running on this profile (see ProfileLocks). */
  lockedBy?: string | null;
  lastUsedAt: Date | null;
  usageCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export type BeginUpload = { ok: true; record: ArchiveRecord; uploadId: string } | { ok: false; reason: 'missing' | 'uploading' | 'in_use' };

/**
 * Records holding a profile archive. Every change is one single-document update (FerretDB
 * has no transactions): an upload marks the record `uploading` and remembers the status
 * it had; success swaps the blob in, failure puts the status back, so the previous
 * archive stays usable throughout.
 */
export class ArchiveRecords<R extends ArchiveRecord> {
  /** Typed as the shared fields: the subclasses' own fields go through their own collection handle. */
  protected readonly col: Collection<ArchiveRecord>;
  constructor(
    db: Db,
    collection: string,
    private readonly idPrefix: string,
    /** An upload older than this is taken to be dead (its API process stopped) and may be replaced. */
    protected readonly staleUploadMs = 2 * 60 * 60 * 1000,
  ) {
    this.col = db.collection<ArchiveRecord>(collection);
  }

  protected async insertWithin(userId: string, fields: Omit<R, keyof ArchiveRecord> & { name: string; description?: string }, limit: number): Promise<R | null> {
    if ((await this.col.countDocuments({ userId })) >= limit) return null;
    const now = new Date();
    const record = {
      ...fields,
      _id: newId(this.idPrefix),
      userId,
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
    await this.col.insertOne(record as unknown as ArchiveRecord);
    // Two creates racing past the count: the later one steps back, so the limit holds.
    const count = await this.col.countDocuments({ userId });
    if (count > limit) {
      const newer = await this.col.countDocuments({ userId, $or: [{ createdAt: { $gt: now } }, { createdAt: now, _id: { $gt: record._id } }] });
      if (count - newer > limit) {
        await this.col.deleteOne({ _id: record._id });
        return null;
      }
    }
    return record;
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
  remove(id: string, userId: string): Promise<R | null> {
    return this.col.findOneAndDelete({ _id: id, userId }) as Promise<R | null>;
  }

  /** Marks the record `uploading`; refused while another upload streams or a live session holds the profile. */
  async beginUpload(id: string, userId: string, now = new Date()): Promise<BeginUpload> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const cur = (await this.get(id, userId)) as ArchiveRecord | null;
      if (!cur) return { ok: false, reason: 'missing' };
      if (cur.lockedBy) return { ok: false, reason: 'in_use' };
      const running = cur.upload && cur.upload.startedAt.getTime() > now.getTime() - this.staleUploadMs;
      if (running) return { ok: false, reason: 'uploading' };
      const upload: PendingUpload = { id: newId('upl', 8), previousStatus: cur.upload ? cur.upload.previousStatus : (cur.status as PendingUpload['previousStatus']), startedAt: now };
      const guard = cur.upload ? { 'upload.id': cur.upload.id } : { upload: null };
      const res = await this.col.updateOne({ _id: id, userId, lockedBy: null, ...guard }, { $set: { status: 'uploading', upload } });
      if (res.modifiedCount === 1) return { ok: true, record: cur as R, uploadId: upload.id };
    }
    return { ok: false, reason: 'uploading' };
  }

  /** Swaps the new archive in; answers the record and the blob it replaced (null when the upload lost its record). */
  async finishUpload(id: string, uploadId: string, blob: { blobId: string; size: number }, now = new Date()): Promise<{ record: R; replacedBlobId: string | null } | null> {
    const set: Partial<ArchiveRecord> = { status: 'ready', blobId: blob.blobId, blobSize: blob.size, blobUploadedAt: now, upload: null, updatedAt: now };
    const before = (await this.col.findOneAndUpdate({ _id: id, 'upload.id': uploadId }, { $set: set }, { returnDocument: 'before' })) as ArchiveRecord | null;
    if (!before) return null;
    return { record: { ...before, ...set } as unknown as R, replacedBlobId: before.blobId };
  }

  /** Puts the status the record had before the upload back; the archive was never touched. */
  async abortUpload(id: string, uploadId: string): Promise<void> {
    const cur = (await this.col.findOne({ _id: id, 'upload.id': uploadId })) as ArchiveRecord | null;
    if (!cur?.upload) return;
    await this.col.updateOne({ _id: id, 'upload.id': uploadId }, { $set: { status: cur.upload.previousStatus, upload: null } });
  }

  /** The sweeper's part: uploads whose API process died go back to their previous status. */
  async recoverStaleUploads(now = new Date()): Promise<number> {
    const stale = (await this.col.find({ 'upload.startedAt': { $lt: new Date(now.getTime() - this.staleUploadMs) } }).toArray()) as ArchiveRecord[];
    let n = 0;
    for (const r of stale) {
      const res = await this.col.updateOne({ _id: r._id, 'upload.id': r.upload!.id }, { $set: { status: r.upload!.previousStatus, upload: null } });
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
    const set: Partial<ArchiveRecord> = { lastUsedAt: now, updatedAt: now };
    if (blob) Object.assign(set, { status: 'ready', blobId: blob.blobId, blobSize: blob.size, blobUploadedAt: now });
    const before = (await this.col.findOneAndUpdate({ _id: id, userId }, { $set: set, $inc: { usageCount: 1 } }, { returnDocument: 'before' })) as ArchiveRecord | null;
    if (!before) return null;
    return { record: { ...before, ...set, usageCount: (before.usageCount ?? 0) + 1 } as unknown as R, replacedBlobId: blob ? before.blobId : null };
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
