/**
 * Multipart uploads, streamed: each file goes to blob storage as it arrives, nothing is
 * held whole in memory. Shared by the environment, profile and file routes.
 */
import busboy from 'busboy';
import type { Request } from 'express';
import { PassThrough, type Readable } from 'node:stream';
import { InvalidParameterError, InvalidParamsError, MissingFieldError, NotFoundError, ServiceError } from '../contracts/errors';
import type { Logger } from '../logger';
import type { BlobInfo, BlobStore } from '../contracts/profiles';
import { validateAndExtract } from '../profiles/archive';
import type { FileRecord, FilesRepository } from '../store/files.repository';
import type { ArchiveRecord, ArchiveRecords } from '../store/profiles.repository';
import { formatBytes, putWithinQuota, type StorageQuota } from '../store/storage-quota';

/** The settings of uploads and storage (parsed with the rest of the configuration). */
export interface StorageSettings {
  /** Largest profile archive (.tar.gz) an upload may send. */
  PROFILE_MAX_BYTES: number;
  /** Largest total of the files inside a profile archive (guards against decompression bombs). */
  PROFILE_MAX_EXPANDED_BYTES: number;
  /** Largest single file of POST /files/upload and POST /environments/:id/files. */
  FILE_MAX_BYTES: number;
  /** Everything one user may keep in blob storage. */
  USER_STORAGE_MAX_BYTES: number;
  /** How long an upload not attached to an environment or a live task is kept. */
  FILE_UPLOAD_TTL_MS: number;
}

export interface IncomingFile {
  /** Position among the request's files, from 0. */
  index: number;
  filename: string;
  mimeType: string;
  stream: Readable;
}

export { formatBytes };

/** A file name as the user gave it, without a path and control characters. */
export function cleanFilename(raw: string | undefined): string {
  const base = (raw ?? '').split(/[/\\]/).pop() ?? '';
  return base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
}

interface ReceiveOptions<T> {
  field: string;
  maxFiles: number;
  onFile: (file: IncomingFile) => Promise<T>;
  undo?: (result: T) => Promise<void>;
  logger?: Logger;
}

/** One multipart body being read: the files handed on so far, and the first failure. */
class MultipartReceiver<T> {
  private readonly jobs: Promise<T>[] = [];
  private failure: Error | undefined;
  private count = 0;
  private settled = false;

  constructor(
    private readonly req: Request,
    private readonly bb: busboy.Busboy,
    private readonly opts: ReceiveOptions<T>,
    private readonly resolve: (results: T[]) => void,
    private readonly reject: (err: Error) => void,
  ) {}

  /** Listens to the body's parts and the request, then starts reading. */
  listen(): void {
    const { bb, req, opts } = this;
    bb.on('file', (name, stream, info) => this.onFile(name, stream, info));
    // A text part in the files' field is a file input left empty (no file name): no file, as before.
    bb.on('field', (name) => {
      if (name !== opts.field) this.fail(this.unknownField(name));
    });
    bb.on('error', (err: Error) => this.fail(new InvalidParamsError(`Malformed multipart body: ${err.message}`)));
    bb.on('partsLimit', () => this.fail(new InvalidParamsError('Too many parts in the multipart body')));
    bb.on('fieldsLimit', () => this.fail(new InvalidParamsError('Too many fields in the multipart body')));
    bb.on('close', () => void this.settle());
    req.on('close', () => {
      if (!req.complete) this.fail(new ServiceError('UPLOAD_ABORTED', 'The upload was interrupted'));
    });
    req.pipe(bb);
  }

  /** Once every file handed on is done: resolves with their results, or undoes those stored and rejects. */
  private async settle(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    const { opts } = this;
    const results = await Promise.allSettled(this.jobs);
    if (!this.failure && this.count === 0) this.failure = new MissingFieldError(opts.field, 'No file provided');
    if (!this.failure) return this.resolve(results.map((r) => (r as PromiseFulfilledResult<T>).value));
    for (const r of results) {
      if (r.status === 'fulfilled' && opts.undo) await opts.undo(r.value).catch((err) => opts.logger?.warn({ err }, 'undoing a stored file failed'));
    }
    this.reject(this.failure);
  }

  /** The first failure stops reading: the file streaming now is destroyed and the rest of the body dropped. */
  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    const { bb, req } = this;
    req.unpipe(bb);
    bb.on('error', () => undefined);
    // Destroys the file streaming now, so its upload stops and cleans up.
    bb.destroy(err);
    // The rest of the body is read and dropped, so the connection stays usable for the answer.
    req.resume();
    void this.settle();
  }

  private onFile(name: string, stream: Readable, info: busboy.FileInfo): void {
    const { opts } = this;
    // Failures reach the consumer through its own pipeline; this keeps a stream destroyed
    // before a consumer is attached from crashing the process with an unhandled 'error'.
    stream.on('error', () => undefined);
    const filename = cleanFilename(info.filename);
    if (!this.failure && name !== opts.field) {
      stream.resume();
      this.fail(this.unknownField(name));
      return;
    }
    // Browsers send an empty, nameless part for a file input left empty.
    if (this.failure || !filename) {
      stream.resume();
      return;
    }
    if (++this.count > opts.maxFiles) {
      stream.resume();
      this.fail(new InvalidParameterError(opts.field, this.count, `At most ${opts.maxFiles} file${opts.maxFiles === 1 ? '' : 's'} per request`, { max: opts.maxFiles }));
      return;
    }
    const job = opts.onFile({ index: this.count - 1, filename, mimeType: info.mimeType || 'application/octet-stream', stream });
    job.catch((err: Error) => this.fail(err));
    this.jobs.push(job);
  }

  /** The request has one field: anything else is a mistake worth saying (a misspelt field name, most often). */
  private unknownField(name: string): InvalidParameterError {
    return new InvalidParameterError(name, null, `Unknown form field "${name}": the files go in the field "${this.opts.field}"`);
  }
}

/**
 * Reads the multipart body and hands each file of `field` to `onFile` while it streams.
 * Resolves with the results in order. On the first failure it stops reading, lets the
 * files already handled be undone by `undo`, discards the rest of the body and rejects.
 */
export function receiveFiles<T>(req: Request, opts: ReceiveOptions<T>): Promise<T[]> {
  let bb: busboy.Busboy;
  try {
    bb = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fields: 50, fieldSize: 64 * 1024, parts: opts.maxFiles + 100 } });
  } catch {
    return Promise.reject(new MissingFieldError(opts.field, 'No file provided'));
  }
  return new Promise<T[]>((resolve, reject) => new MultipartReceiver(req, bb, opts, resolve, reject).listen());
}

/** What stores a blob for a user: the blob store and the user's storage quota. */
export interface BlobStorage {
  blobs: BlobStore;
  quota: StorageQuota;
}

/**
 * Stores one streaming file under its caps: `perFile`, and the user's quota, reserved before
 * the first byte is stored and grown as the file arrives (so parallel uploads never add up
 * past it). Messages name the file and the limit.
 */
export async function putCapped(storage: BlobStorage, file: IncomingFile, meta: { userId: string; kind: string; perFile: number; freedOnSuccess?: number }): Promise<BlobInfo> {
  const limit = storage.quota.limitBytes;
  try {
    return await putWithinQuota(storage, file.stream, {
      ...meta,
      filename: file.filename,
      contentType: file.mimeType,
      quotaMessage: `"${file.filename}" does not fit in the storage quota of ${formatBytes(limit)}`,
    });
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'PAYLOAD_TOO_LARGE') {
      throw new ServiceError('PAYLOAD_TOO_LARGE', `"${file.filename}" exceeds the maximum size of ${formatBytes(meta.perFile)}`, { maxBytes: meta.perFile, filename: file.filename });
    }
    if (err instanceof ServiceError && err.code === 'STORAGE_QUOTA_EXCEEDED') throw new ServiceError(err.code, err.message, { ...err.details, filename: file.filename });
    throw err;
  }
}

/**
 * Stores one file of a multipart request: its blob under the caps, then its record. The
 * blob goes again if the record cannot be written. `ttlMs` null: the file lives as long as
 * what it is attached to.
 */
export async function storeUploadedFile(
  deps: BlobStorage & { files: FilesRepository; settings: StorageSettings & { FILE_MAX_BYTES: number } },
  file: IncomingFile,
  meta: { userId: string; kind: 'upload' | 'environment'; environmentId?: string; ttlMs: number | null },
): Promise<FileRecord> {
  const createdAt = new Date();
  const blob = await putCapped(deps, file, { userId: meta.userId, kind: meta.kind, perFile: deps.settings.FILE_MAX_BYTES });
  try {
    return await deps.files.createFromBlob({
      userId: meta.userId,
      blob: { ...blob, contentType: file.mimeType },
      originalName: file.filename,
      kind: meta.kind,
      environmentId: meta.environmentId,
      expiresAt: meta.ttlMs === null ? null : new Date(createdAt.getTime() + meta.ttlMs),
      createdAt,
      index: file.index,
    });
  } catch (err) {
    await deps.blobs.delete(blob.blobId);
    throw err;
  }
}

export const ARCHIVE_NAME = /\.(tar\.gz|tgz)$/i;

/**
 * POST /environments/:id/upload and /profiles/:id/upload: the archive streams into blob
 * storage and through the validator at once. The record is `uploading` meanwhile; on
 * success the new blob replaces the old one, on any failure the old one and the status
 * stay and the new blob is deleted.
 */
export async function receiveArchive<R extends ArchiveRecord>(
  req: Request,
  deps: BlobStorage & { repo: ArchiveRecords<R>; settings: StorageSettings; logger: Logger },
  target: { id: string; userId: string; kind: 'environment' | 'profile'; notFound: () => NotFoundError },
): Promise<R> {
  const { repo, blobs, settings, logger } = deps;
  if (!(await repo.get(target.id, target.userId))) throw target.notFound();
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > settings.PROFILE_MAX_BYTES + 64 * 1024) {
    throw new ServiceError('PAYLOAD_TOO_LARGE', `The archive exceeds the maximum size of ${formatBytes(settings.PROFILE_MAX_BYTES)}`, { maxBytes: settings.PROFILE_MAX_BYTES });
  }

  const [record] = await receiveFiles(req, {
    field: 'file',
    maxFiles: 1,
    logger,
    onFile: async (file) => {
      if (!ARCHIVE_NAME.test(file.filename)) {
        file.stream.resume();
        throw new ServiceError('INVALID_FILE_TYPE', 'Only .tar.gz files are allowed', { filename: file.filename });
      }
      const begun = await repo.beginUpload(target.id, target.userId);
      if (!begun.ok) {
        file.stream.resume();
        if (begun.reason === 'missing') throw target.notFound();
        if (begun.reason === 'in_use') throw new ServiceError('PROFILE_IN_USE', `The ${target.kind} is in use by a live session; upload again when it has ended`);
        throw new ServiceError('UPLOAD_IN_PROGRESS', `Another upload to this ${target.kind} is in progress`);
      }
      const { blob, error } = await teeArchive(
        file.stream,
        (input) => putCapped(deps, { ...file, stream: input }, { userId: target.userId, kind: target.kind, perFile: settings.PROFILE_MAX_BYTES, freedOnSuccess: begun.record.blobSize ?? 0 }),
        (input) => validateAndExtract(input, null, { maxBytes: settings.PROFILE_MAX_EXPANDED_BYTES }),
      );
      const done = error ? null : await repo.finishUpload(target.id, begun.uploadId, blob!).catch((err) => ({ err }));
      if (done && !('err' in done)) {
        if (done.replacedBlobId) await blobs.delete(done.replacedBlobId).catch((err) => logger.warn({ err, blobId: done.replacedBlobId }, 'replaced profile blob not deleted'));
        return done.record;
      }
      await repo.abortUpload(target.id, begun.uploadId).catch((err) => logger.error({ err, id: target.id }, 'upload status not restored'));
      if (blob) await blobs.delete(blob.blobId).catch((err) => logger.warn({ err, blobId: blob.blobId }, 'refused profile blob not deleted'));
      // No record to swap into: it was deleted while the archive streamed.
      throw error ?? (done && 'err' in done ? done.err : target.notFound());
    },
  });
  return record;
}

/**
 * One stream to two consumers with backpressure (the slower sets the pace). When either
 * fails the other is stopped; the error is the first failure (the cause, not the abort it
 * led to). A blob stored before the validator failed is returned with the error, to be deleted.
 */
async function teeArchive(source: Readable, store: (s: Readable) => Promise<BlobInfo>, validate: (s: Readable) => Promise<unknown>): Promise<{ blob: BlobInfo | null; error: unknown }> {
  const toStore = new PassThrough({ highWaterMark: 1024 * 1024 });
  const toCheck = new PassThrough({ highWaterMark: 1024 * 1024 });
  // Either may be stopped before its consumer has attached (the store checks the quota first).
  toStore.on('error', () => undefined);
  toCheck.on('error', () => undefined);
  let firstError: unknown;
  const stopBoth = (err: unknown) => {
    firstError ??= err;
    source.unpipe(toStore);
    source.unpipe(toCheck);
    const abort = new ServiceError('UPLOAD_ABORTED', 'Upload stopped');
    toStore.destroy(abort);
    toCheck.destroy(abort);
  };
  source.on('error', stopBoth);
  source.pipe(toStore);
  source.pipe(toCheck);
  const [stored, checked] = await Promise.allSettled([store(toStore).catch((err) => (stopBoth(err), Promise.reject(err))), validate(toCheck).catch((err) => (stopBoth(err), Promise.reject(err)))]);
  const blob = stored.status === 'fulfilled' ? stored.value : null;
  if (stored.status === 'fulfilled' && checked.status === 'fulfilled') return { blob, error: null };
  return { blob, error: firstError ?? (checked.status === 'rejected' ? checked.reason : (stored as PromiseRejectedResult).reason) };
}
