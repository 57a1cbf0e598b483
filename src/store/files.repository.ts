import type { Collection, Db } from 'mongodb';
import type { BlobInfo, BlobStore } from '../contracts/profiles';
import { newId } from './ids';

/**
 * `upload`: from POST /files/upload, expires unless a task or environment holds it;
 * `environment`: attached to an environment, lives as long as it;
 * `download`: a file a page downloaded during a task (stored by the worker);
 * `picture`: the picture of the page after a recorded step (stored by the worker, shown on
 * the task's record page; not listed with the user's files).
 */
export type FileKind = 'upload' | 'environment' | 'download' | 'picture';

export interface FileRecord {
  /** The wire `fileId`. */
  _id: string;
  userId: string;
  blobId: string;
  originalName: string;
  size: number;
  contentType: string;
  kind: FileKind;
  environmentId: string | null;
  sessionId: string | null;
  taskId: string | null;
  sourceUrl: string | null;
  /** Listing order: the time the file began to arrive, with its place in its request (ms × 1000 + index). */
  seq: number;
  /** Removed by the sweeper after this; null for files that live as long as their owner. */
  expiresAt: Date | null;
  createdAt: Date;
}

/** The longest a task may run (maxDuration's ceiling): files claimed by a task outlive it by the upload TTL. */
const MAX_TASK_MS = 300_000;

/** What a new file record is made of. */
export interface NewFileRecord {
  userId: string;
  blob: Pick<BlobInfo, 'blobId' | 'size'> & { contentType?: string };
  originalName: string;
  kind: FileKind;
  environmentId?: string | null;
  sessionId?: string | null;
  taskId?: string | null;
  sourceUrl?: string | null;
  expiresAt?: Date | null;
  /** When the file began to arrive and its place in its request, so files list in the order sent. */
  createdAt?: Date;
  index?: number;
}

export class FilesRepository {
  private readonly files: Collection<FileRecord>;
  constructor(
    private readonly db: Db,
    private readonly blobs: BlobStore,
    private readonly opts: { uploadTtlMs: number; downloadTtlMs?: number } = { uploadTtlMs: 60 * 60 * 1000 },
  ) {
    this.files = db.collection<FileRecord>('files');
  }

  /** A file record over a stored blob (the blob's size is the file's). */
  async createFromBlob(input: NewFileRecord): Promise<FileRecord> {
    const record = this.recordOf(input);
    await this.files.insertOne(record);
    return record;
  }

  /** Records of several blobs of one user at once (a task's step pictures): one insert. */
  async createManyFromBlobs(inputs: NewFileRecord[]): Promise<FileRecord[]> {
    const records = inputs.map((input, i) => this.recordOf({ ...input, index: input.index ?? i }));
    if (records.length) await this.files.insertMany(records);
    return records;
  }

  private recordOf(input: NewFileRecord): FileRecord {
    const now = input.createdAt ?? new Date();
    const record: FileRecord = {
      _id: newId('file'),
      userId: input.userId,
      blobId: input.blob.blobId,
      originalName: input.originalName,
      size: input.blob.size,
      contentType: input.blob.contentType ?? 'application/octet-stream',
      kind: input.kind,
      environmentId: input.environmentId ?? null,
      sessionId: input.sessionId ?? null,
      taskId: input.taskId ?? null,
      sourceUrl: input.sourceUrl ?? null,
      seq: now.getTime() * 1000 + ((input.index ?? 0) % 1000),
      expiresAt: input.expiresAt !== undefined ? input.expiresAt : this.defaultExpiry(input.kind, now),
      createdAt: now,
    };
    return record;
  }

  /** Uploads live for the upload TTL, downloads and step pictures for the download TTL (0: until deleted), environment files as long as their environment. */
  private defaultExpiry(kind: FileKind, now: Date): Date | null {
    if (kind === 'upload') return new Date(now.getTime() + this.opts.uploadTtlMs);
    if ((kind === 'download' || kind === 'picture') && this.opts.downloadTtlMs) return new Date(now.getTime() + this.opts.downloadTtlMs);
    return null;
  }

  /**
   * The user's own uploads and downloads (GET /files), newest first, live ones only;
   * `after` is the last file of the previous page.
   */
  async listForUser(userId: string, opts: { limit: number; after?: { createdAt: Date; id: string } }, now = new Date()): Promise<FileRecord[]> {
    const filter: Record<string, unknown> = { userId, kind: { $in: ['upload', 'download'] } };
    if (opts.after) filter.$or = [{ createdAt: { $lt: opts.after.createdAt } }, { createdAt: opts.after.createdAt, _id: { $lt: opts.after.id } }];
    const page: FileRecord[] = [];
    // Expired files not swept yet are skipped, so a page may take more than one read.
    const cursor = this.files.find(filter).sort({ createdAt: -1, _id: -1 });
    for await (const f of cursor) {
      if (f.expiresAt && f.expiresAt <= now) continue;
      page.push(f);
      if (page.length >= opts.limit) break;
    }
    await cursor.close();
    return page;
  }

  /** Deletes one of the user's uploads or downloads (record, then blob); false when it is not theirs. */
  async deleteForUser(fileId: string, userId: string, now = new Date()): Promise<boolean> {
    // An expired file not swept yet is already gone for the user.
    const gone = await this.files.findOneAndDelete({ _id: fileId, userId, kind: { $in: ['upload', 'download'] }, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });
    if (!gone) return false;
    await this.blobs.delete(gone.blobId);
    return true;
  }

  /** The file if it exists and has not expired (whoever owns it: signed links). */
  async get(fileId: string, now = new Date()): Promise<FileRecord | null> {
    const f = await this.files.findOne({ _id: fileId });
    return f && !(f.expiresAt && f.expiresAt <= now) ? f : null;
  }

  async getForUser(fileId: string, userId: string, now = new Date()): Promise<FileRecord | null> {
    const f = await this.get(fileId, now);
    return f?.userId === userId ? f : null;
  }

  listForEnvironment(environmentId: string, userId: string): Promise<FileRecord[]> {
    return this.files.find({ environmentId, userId, kind: 'environment' }).sort({ seq: 1, _id: 1 }).toArray();
  }

  /** Deletes one file of an environment (record, then blob); false when it is not that environment's. */
  async deleteFromEnvironment(environmentId: string, fileId: string, userId: string): Promise<boolean> {
    const gone = await this.files.findOneAndDelete({ _id: fileId, environmentId, userId, kind: 'environment' });
    if (!gone) return false;
    await this.blobs.delete(gone.blobId);
    return true;
  }

  /** Every file attached to an environment, with its blob (the environment is being deleted). */
  async deleteForEnvironment(environmentId: string): Promise<number> {
    let n = 0;
    for (const f of await this.files.find({ environmentId }, { projection: { _id: 1 } }).toArray()) n += (await this.deleteOne(f._id)) ? 1 : 0;
    return n;
  }

  /** The step pictures of one of the user's tasks, with their blobs (its recording is deleted). */
  async deletePicturesOfTask(taskId: string, userId: string): Promise<number> {
    let n = 0;
    for (const f of await this.files.find({ taskId, userId, kind: 'picture' }, { projection: { _id: 1 } }).toArray()) n += (await this.deleteOne(f._id)) ? 1 : 0;
    return n;
  }

  /** The step pictures of any of `taskIds`, with their blobs (the records' retention). */
  async deletePicturesOfTasks(taskIds: string[]): Promise<number> {
    if (!taskIds.length) return 0;
    let n = 0;
    for (const f of await this.files.find({ taskId: { $in: taskIds }, kind: 'picture' }, { projection: { _id: 1 } }).toArray()) n += (await this.deleteOne(f._id)) ? 1 : 0;
    return n;
  }

  /** Deletes a file and its blob; for records created by a request that then failed. */
  async deleteOne(fileId: string): Promise<boolean> {
    const gone = await this.files.findOneAndDelete({ _id: fileId });
    if (gone) await this.blobs.delete(gone.blobId);
    return Boolean(gone);
  }

  /**
   * The user's live files among `fileIds`, in the order asked; `missing` lists the ids that
   * are unknown, expired or another user's (the caller answers 400 before the task starts).
   */
  async resolve(userId: string, fileIds: string[], now = new Date()): Promise<{ files: FileRecord[]; missing: string[] }> {
    const unique = [...new Set(fileIds)];
    if (!unique.length) return { files: [], missing: [] };
    const found = await this.files.find({ _id: { $in: unique }, userId }).toArray();
    const live = new Map(found.filter((f) => !(f.expiresAt && f.expiresAt <= now)).map((f) => [f._id, f]));
    return { files: unique.filter((id) => live.has(id)).map((id) => live.get(id)!), missing: unique.filter((id) => !live.has(id)) };
  }

  /**
   * `resolve`, and the uploads among them are kept until `holdUntil` (by default one upload
   * TTL after the longest a task can run), so they do not expire under a running task.
   */
  async claimForTask(userId: string, fileIds: string[], holdUntil?: Date): Promise<{ files: FileRecord[]; missing: string[] }> {
    const now = new Date();
    const res = await this.resolve(userId, fileIds, now);
    const until = holdUntil ?? new Date(now.getTime() + MAX_TASK_MS + this.opts.uploadTtlMs);
    const uploads = res.files.filter((f) => f.expiresAt && f.expiresAt < until).map((f) => f._id);
    if (uploads.length) await this.files.updateMany({ _id: { $in: uploads }, userId, expiresAt: { $ne: null, $lt: until } }, { $set: { expiresAt: until } });
    return res;
  }

  /** The sweeper's part: expired files and their blobs. Answers how many went. */
  async sweepExpired(now = new Date(), batch = 500): Promise<number> {
    let n = 0;
    for (;;) {
      const due = await this.files.find({ expiresAt: { $ne: null, $lte: now } }, { projection: { _id: 1 } }).limit(batch).toArray();
      for (const f of due) {
        // Re-checked per record: a task may have claimed it meanwhile.
        const gone = await this.files.findOneAndDelete({ _id: f._id, expiresAt: { $ne: null, $lte: now } });
        if (gone) {
          await this.blobs.delete(gone.blobId);
          n++;
        }
      }
      if (due.length < batch) return n;
    }
  }

  /** Blob ids among `blobIds` that a file refers to. */
  async referencedBlobs(blobIds: string[]): Promise<Set<string>> {
    const docs = await this.files.find({ blobId: { $in: blobIds } }, { projection: { blobId: 1 } }).toArray();
    return new Set(docs.map((d) => d.blobId));
  }
}

/**
 * Blobs stored before `before` that no file, environment or profile refers to: what a
 * process that died between storing a blob and recording it left behind. `before` must be
 * older than the longest upload (a day is safe).
 */
export async function sweepOrphanBlobs(
  blobs: BlobStore & { idsBefore(before: Date, limit?: number, after?: string): Promise<string[]> },
  owners: { referencedBlobs(ids: string[]): Promise<Set<string>> }[],
  before: Date,
): Promise<number> {
  let n = 0;
  let after: string | undefined;
  for (;;) {
    const ids = await blobs.idsBefore(before, 500, after);
    if (!ids.length) return n;
    after = ids[ids.length - 1];
    const used = new Set<string>();
    for (const owner of owners) for (const id of await owner.referencedBlobs(ids)) used.add(id);
    for (const id of ids) {
      if (used.has(id)) continue;
      await blobs.delete(id);
      n++;
    }
  }
}

/**
 * One pass of the storage sweeper (every process may run it; each step is idempotent):
 * expired uploads and downloads, uploads and quota reservations whose process died, and,
 * with `orphansBefore`, blobs nothing refers to.
 */
export async function runStorageSweep(
  store: {
    blobs: BlobStore & { idsBefore(before: Date, limit?: number, after?: string): Promise<string[]> };
    files: FilesRepository;
    environments: { recoverStaleUploads(now?: Date): Promise<number>; referencedBlobs(ids: string[]): Promise<Set<string>> };
    profiles: { recoverStaleUploads(now?: Date): Promise<number>; referencedBlobs(ids: string[]): Promise<Set<string>> };
    /** Quota reservations of processes that died. */
    reservations?: { sweepStale(now?: Date): Promise<number> };
  },
  opts: { now?: Date; orphansBefore?: Date } = {},
): Promise<{ expiredFiles: number; staleUploads: number; orphanBlobs: number }> {
  const now = opts.now ?? new Date();
  const expiredFiles = await store.files.sweepExpired(now);
  const staleUploads = (await store.environments.recoverStaleUploads(now)) + (await store.profiles.recoverStaleUploads(now));
  await store.reservations?.sweepStale(now);
  const orphanBlobs = opts.orphansBefore ? await sweepOrphanBlobs(store.blobs, [store.files, store.environments, store.profiles], opts.orphansBefore) : 0;
  return { expiredFiles, staleUploads, orphanBlobs };
}
