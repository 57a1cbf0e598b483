import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GridFSBucket, type Binary, type Collection, type Db, type FindCursor, type GridFSBucketWriteStream } from 'mongodb';
import { NotFoundError, ServiceError } from '../contracts/errors';
import type { BlobInfo, BlobStore } from '../contracts/profiles';
import { newId } from './ids';

export interface BlobFileDoc {
  _id: string;
  length: number;
  filename: string;
  uploadDate: Date;
  metadata?: { userId?: string; kind?: string; contentType?: string };
}

export const BLOB_BUCKET = 'blobs';

/** Bytes of one user's blobs, from the records (`blobs.files`) both stores keep. */
export async function blobUsage(files: Collection<BlobFileDoc>, userId: string): Promise<number> {
  const [row] = await files.aggregate<{ total: number }>([{ $match: { 'metadata.userId': userId } }, { $group: { _id: null, total: { $sum: '$length' } } }]).toArray();
  return row?.total ?? 0;
}

/** A page of ids of blobs recorded before `before`, in id order after `after`. */
export async function blobIdsBefore(files: Collection<BlobFileDoc>, before: Date, limit: number, after?: string): Promise<string[]> {
  const filter = after === undefined ? { uploadDate: { $lt: before } } : { uploadDate: { $lt: before }, _id: { $gt: after } };
  const docs = await files.find(filter, { projection: { _id: 1 } }).sort({ _id: 1 }).limit(limit).toArray();
  return docs.map((d) => d._id);
}

/** Counts bytes as they pass and fails the stream past the cap, so nothing above it is stored. */
export class ByteCap extends Transform {
  bytes = 0;
  constructor(private readonly maxBytes: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return cb(new ServiceError('PAYLOAD_TOO_LARGE', `The file exceeds the maximum size of ${this.maxBytes} bytes`, { maxBytes: this.maxBytes }));
    cb(null, chunk);
  }
}

/**
 * Blobs in MongoDB GridFS (bucket `blobs`), streamed in and out in 1 MB chunks, so every
 * API instance and worker reaches them and nothing is held whole in memory.
 */
export class GridFsBlobStore implements BlobStore {
  private readonly bucket: GridFSBucket;
  constructor(private readonly db: Db, opts: { chunkSizeBytes?: number } = {}) {
    this.bucket = new GridFSBucket(db, { bucketName: BLOB_BUCKET, chunkSizeBytes: opts.chunkSizeBytes ?? 1024 * 1024 });
  }

  async put(input: Readable, meta: { filename: string; contentType: string; userId: string; maxBytes: number; kind: string }): Promise<BlobInfo> {
    const blobId = newId('blob');
    const cap = new ByteCap(meta.maxBytes);
    const upload = this.bucket.openUploadStreamWithId(blobId as never, meta.filename, { metadata: { userId: meta.userId, kind: meta.kind, contentType: meta.contentType } });
    try {
      await pipeline(input, cap, upload);
    } catch (err) {
      await this.discard(blobId, upload);
      // The cap's error wins over what the abort did to the other streams.
      throw err;
    }
    return { blobId, size: cap.bytes, filename: meta.filename, contentType: meta.contentType, userId: meta.userId, createdAt: upload.gridFSFile?.uploadDate ?? new Date() };
  }

  /**
   * Reads the chunks a few at a time: the driver's download stream takes the server's
   * default batch (101 chunks, 101 MB here), which is what memory would hold per batch.
   */
  async get(blobId: string): Promise<Readable> {
    const file = await this.files().findOne({ _id: blobId });
    if (!file) throw new NotFoundError('BLOB_NOT_FOUND', 'Blob not found');
    const cursor = this.chunks().find({ files_id: blobId }, { batchSize: 4, projection: { n: 1, data: 1 } }).sort({ n: 1 });
    return Readable.from(readChunks(cursor, blobId, file.length), { objectMode: false });
  }

  async stat(blobId: string): Promise<BlobInfo | null> {
    const doc = await this.files().findOne({ _id: blobId });
    if (!doc) return null;
    return { blobId, size: doc.length, filename: doc.filename, contentType: doc.metadata?.contentType ?? 'application/octet-stream', userId: doc.metadata?.userId ?? '', createdAt: doc.uploadDate };
  }

  /** Idempotent: deleting an unknown blob is not an error. */
  async delete(blobId: string): Promise<void> {
    await this.files().deleteOne({ _id: blobId });
    await this.chunks().deleteMany({ files_id: blobId });
  }

  usage(userId: string): Promise<number> {
    return blobUsage(this.files(), userId);
  }

  /** Ids of blobs stored before `before`, in id order after `after`: pages for the sweep of blobs no record refers to. */
  idsBefore(before: Date, limit = 500, after?: string): Promise<string[]> {
    return blobIdsBefore(this.files(), before, limit, after);
  }

  /**
   * Removes what a failed upload wrote. The driver may still have a chunk insert in
   * flight when the stream is destroyed, so the delete waits for it to settle.
   */
  private async discard(blobId: string, upload: GridFSBucketWriteStream): Promise<void> {
    const state = (upload as unknown as { state?: { outstandingRequests?: number } }).state;
    for (let i = 0; i < 100 && (state?.outstandingRequests ?? 0) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    await this.delete(blobId).catch(() => undefined);
  }

  private files() {
    return this.db.collection<BlobFileDoc>(`${BLOB_BUCKET}.files`);
  }
  private chunks() {
    return this.db.collection<ChunkDoc>(`${BLOB_BUCKET}.chunks`);
  }
}

interface ChunkDoc {
  files_id: string;
  n: number;
  data: Binary;
}

async function* readChunks(cursor: FindCursor<ChunkDoc>, blobId: string, length: number): AsyncGenerator<Buffer> {
  let expected = 0;
  let total = 0;
  try {
    for await (const chunk of cursor) {
      if (chunk.n !== expected) throw new ServiceError('BLOB_CORRUPT', `Blob ${blobId} is missing chunk ${expected}`);
      expected++;
      const bytes = chunk.data.buffer;
      total += bytes.length;
      yield Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
  } finally {
    await cursor.close();
  }
  if (total !== length) throw new ServiceError('BLOB_CORRUPT', `Blob ${blobId} has ${total} of ${length} bytes`);
}
