/**
 * The seams between the storage side of environments and profiles (API: uploads,
 * records, blobs) and the browser side (workers: running Chromium on a profile).
 * Implementations: src/store/blobs.ts (GridFS) and src/profiles/archive.ts.
 */
import type { Readable } from 'node:stream';

export interface BlobInfo {
  blobId: string;
  size: number;
  filename: string;
  contentType: string;
  userId: string;
  createdAt: Date;
}

/** Blob storage every API instance and worker reaches (GridFS by default; S3-compatible later). */
export interface BlobStore {
  /** Streams `input` in; rejects with a 413 ServiceError past `maxBytes` (and deletes what was written). */
  put(input: Readable, meta: { filename: string; contentType: string; userId: string; maxBytes: number; kind: string }): Promise<BlobInfo>;
  /** Streams a blob out; rejects with a 404 ServiceError for an unknown id. */
  get(blobId: string): Promise<Readable>;
  stat(blobId: string): Promise<BlobInfo | null>;
  delete(blobId: string): Promise<void>;
  /** Bytes stored for one user (for the per-user cap). */
  usage(userId: string): Promise<number>;
}

/** Where a session's browser profile lives: an environment's or a profile's archive. */
export interface ProfileSource {
  kind: 'environment' | 'profile';
  id: string;
  userId: string;
}

/** A session's profile directory on a worker: laid out before Chromium starts, archived back after. */
export interface ProfileMaterializer {
  /** The user-data directory for the session, filled from the profile's archive. */
  materialize(source: ProfileSource, sessionId: string): Promise<string>;
  /** Archives the directory back into the profile and removes it. */
  persist(source: ProfileSource, sessionId: string): Promise<unknown>;
  /** Removes the directory without archiving it (the session was killed from outside). */
  discard?(sessionId: string): Promise<void>;
}
