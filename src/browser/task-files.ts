import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { BlobStore } from '../contracts/profiles';
import type { FilesRepository } from '../store/files.repository';
import { putWithinQuota, type StorageQuota } from '../store/storage-quota';
import type { PersistDownload } from './artifacts';

/** A file a task can upload, as the model is told of it. */
export interface TaskFile {
  fileId: string;
  name: string;
  size: number;
}

/** Files a task can upload: listed for the model, fetched to local paths on use. */
export interface TaskFiles {
  available(): TaskFile[];
  /** A local path of the file (downloaded from storage on first use). */
  localPath(fileId: string): Promise<string>;
}

/** Where task files come from (the worker's storage); the agent turns them into TaskFiles. */
export interface FileProvider {
  /** The files a task may use: its own uploads and the environment's files, all the user's. */
  forTask(query: { userId: string; sessionId: string; fileIds: string[]; environmentId?: string }): Promise<TaskFiles>;
}

/**
 * Files in storage as the agent uses them: a task's uploads and its environment's files
 * (fetched to the worker's disk on first use), and the page's downloads (streamed in).
 */
export class StoredFiles implements FileProvider {
  constructor(private readonly deps: { files: FilesRepository; blobs: BlobStore; quota: StorageQuota; dataDir: string; maxDownloadBytes: number }) {}

  async forTask(q: { userId: string; sessionId: string; fileIds: string[]; environmentId?: string }): Promise<TaskFiles> {
    const own = q.fileIds.length ? (await this.deps.files.resolve(q.userId, q.fileIds)).files : [];
    const env = q.environmentId ? await this.deps.files.listForEnvironment(q.environmentId, q.userId) : [];
    const records = [...own, ...env.filter((e) => !own.some((o) => o._id === e._id))];
    const dir = path.join(this.deps.dataDir, 'uploads', q.sessionId);
    const local = new Map<string, Promise<string>>();
    return {
      available: () => records.map((r) => ({ fileId: r._id, name: r.originalName, size: r.size })),
      localPath: (fileId) => {
        const rec = records.find((r) => r._id === fileId);
        if (!rec) return Promise.reject(new Error(`Unknown file ${fileId}`));
        if (!local.has(fileId)) {
          local.set(
            fileId,
            (async () => {
              // The stored name, made safe for the disk; the id keeps equal names apart.
              const target = path.join(dir, fileId, path.basename(rec.originalName).replace(/[^\w.\- ]/g, '_') || 'file');
              await fs.mkdir(path.dirname(target), { recursive: true });
              await pipeline(await this.deps.blobs.get(rec.blobId), createWriteStream(target));
              return target;
            })(),
          );
        }
        return local.get(fileId)!;
      },
    };
  }

  /** Stores a download of the page as a file of the task's owner, within the owner's storage quota. */
  persistDownload(userOf: (sessionId: string) => string | undefined): PersistDownload {
    return async ({ sessionId, taskId, sourceUrl, filename, stream }) => {
      const userId = userOf(sessionId);
      if (!userId) throw new Error('download outside a known session');
      const blob = await putWithinQuota(this.deps, stream as Readable, { filename, contentType: 'application/octet-stream', userId, perFile: this.deps.maxDownloadBytes, kind: 'download' });
      try {
        const rec = await this.deps.files.createFromBlob({ userId, blob, originalName: filename, kind: 'download', sessionId, taskId, sourceUrl });
        return { fileId: rec._id };
      } catch (err) {
        await this.deps.blobs.delete(blob.blobId).catch(() => undefined);
        throw err;
      }
    };
  }

  async discard(sessionId: string): Promise<void> {
    await fs.rm(path.join(this.deps.dataDir, 'uploads', sessionId), { recursive: true, force: true });
  }
}
