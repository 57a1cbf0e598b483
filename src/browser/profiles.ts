import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from 'mongodb';
import type { Logger } from '../logger';
import { createArchive, validateAndExtract } from '../profiles/archive';
import type { BlobStore, ProfileMaterializer, ProfileSource } from '../profiles/contracts';

import { PROFILE_COLLECTION as COLLECTION } from '../store/profile-locks';

interface ProfileRecord {
  _id: string;
  userId: string;
  blobId?: string | null;
  lockedBy?: string | null;
  usageCount?: number;
}

/**
 * A session's browser profile on this worker: laid out from its archive before Chromium
 * starts on it, archived back (and the record updated) when the session ends.
 */
export class ProfileDirectories implements ProfileMaterializer {
  constructor(
    private readonly deps: { db: Db; blobs: BlobStore; dataDir: string; maxBytes: number; logger: Logger },
  ) {}

  dirOf(sessionId: string): string {
    return path.join(this.deps.dataDir, 'profiles', sessionId);
  }

  /** Extracts the profile's archive (if it has one) into a fresh user-data directory. */
  async materialize(source: ProfileSource, sessionId: string): Promise<string> {
    const dir = this.dirOf(sessionId);
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(dir, { recursive: true });
    const rec = await this.record(source);
    if (rec?.blobId) {
      await validateAndExtract(await this.deps.blobs.get(rec.blobId), dir, { maxBytes: this.deps.maxBytes });
      // A profile taken from a running Chromium still carries its lock files.
      await Promise.all(['SingletonLock', 'SingletonSocket', 'SingletonCookie'].map((f) => fs.rm(path.join(dir, f), { force: true })));
    }
    return dir;
  }

  /** Archives the directory back into storage and points the record at it; the old archive goes. */
  async persist(source: ProfileSource, sessionId: string): Promise<{ blobSize: number } | null> {
    const dir = this.dirOf(sessionId);
    try {
      await fs.access(dir);
    } catch {
      return null;
    }
    const rec = await this.record(source);
    if (!rec) {
      await fs.rm(dir, { recursive: true, force: true });
      return null;
    }
    const blob = await this.deps.blobs.put(createArchive(dir), {
      filename: `${source.kind}-${source.id}.tar.gz`,
      contentType: 'application/gzip',
      userId: source.userId,
      maxBytes: this.deps.maxBytes,
      kind: 'profile',
    });
    const now = new Date();
    const col = this.deps.db.collection<ProfileRecord>(COLLECTION[source.kind]);
    const set = { blobId: blob.blobId, blobSize: blob.size, blobUploadedAt: now, lastUsedAt: now, status: 'ready', updatedAt: now, usageCount: (rec.usageCount ?? 0) + 1 };
    // Written, then read back: FerretDB 1.x writes an update back as a whole document, so a
    // concurrent change of the record (a rename) can put the old archive back. The old blob
    // is deleted only once the record is seen to point at the new one.
    let recorded = false;
    for (let attempt = 0; attempt < 5 && !recorded; attempt++) {
      if ((await col.updateOne({ _id: source.id }, { $set: set })).matchedCount === 0) break;
      recorded = (await col.findOne({ _id: source.id }, { projection: { blobId: 1 } }))?.blobId === blob.blobId;
    }
    if (!recorded) {
      // The record is gone (deleted during the session): the new archive has no owner.
      await this.deps.blobs.delete(blob.blobId).catch(() => undefined);
      await fs.rm(dir, { recursive: true, force: true });
      return null;
    }
    if (rec.blobId && rec.blobId !== blob.blobId) await this.deps.blobs.delete(rec.blobId).catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
    this.deps.logger.info({ sessionId, profile: source.id, blobSize: blob.size }, 'profile archived');
    return { blobSize: blob.size };
  }

  async discard(sessionId: string): Promise<void> {
    await fs.rm(this.dirOf(sessionId), { recursive: true, force: true });
  }

  private record(source: ProfileSource): Promise<ProfileRecord | null> {
    return this.deps.db.collection<ProfileRecord>(COLLECTION[source.kind]).findOne({ _id: source.id, userId: source.userId });
  }
}
