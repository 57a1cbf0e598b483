import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from 'mongodb';
import { isServiceError } from '../contracts/errors';
import type { Logger } from '../logger';
import { createArchive, validateAndExtract } from '../profiles/archive';
import type { BlobStore, ProfileMaterializer, ProfileSource } from '../contracts/profiles';
import { ARCHIVE_RENEW_MS, PROFILE_COLLECTION as COLLECTION, ProfileLocks } from '../store/profile-locks';
import { putWithinQuota, type StorageQuota } from '../store/storage-quota';

interface ProfileRecord {
  _id: string;
  userId: string;
  blobId?: string | null;
  blobSize?: number | null;
  lockedBy?: string | null;
  usageCount?: number;
}

/**
 * What Chromium rebuilds on its own: caches, shader and GPU caches, crash dumps, metrics.
 * They are left out when a profile is archived back, so a profile does not grow with every
 * page its sessions visit. Paths are relative to the user-data directory; a profile's own
 * directory (`Default`, `Profile 1`) is the first segment of the per-profile ones.
 */
const REGENERABLE_IN_PROFILE = [
  'Cache',
  'Code Cache',
  'GPUCache',
  'Media Cache',
  'DawnCache',
  'DawnGraphiteCache',
  'DawnWebGPUCache',
  'GrShaderCache',
  'ShaderCache',
  'Service Worker/CacheStorage',
  'Service Worker/ScriptCache',
  'blob_storage',
  'VideoDecodeStats',
];
const REGENERABLE_AT_ROOT = [
  'GrShaderCache',
  'ShaderCache',
  'GraphiteDawnCache',
  'DawnCache',
  'component_crx_cache',
  'extensions_crx_cache',
  'Crashpad',
  'Crash Reports',
  'BrowserMetrics',
  'BrowserMetrics-spare.pma',
  'DeferredBrowserMetrics',
];

const under = (rel: string, prefix: string) => rel === prefix || rel.startsWith(`${prefix}/`);

/** Whether a path of a user-data directory holds only what Chromium rebuilds (so it is not archived). */
export function isRegenerable(relPath: string): boolean {
  if (REGENERABLE_AT_ROOT.some((p) => under(relPath, p))) return true;
  const slash = relPath.indexOf('/');
  if (slash < 0) return false;
  const inProfile = relPath.slice(slash + 1);
  return REGENERABLE_IN_PROFILE.some((p) => under(inProfile, p));
}

/**
 * A session's browser profile on this worker: laid out from its archive before Chromium
 * starts on it, archived back (and the record updated) when the session ends. The session's
 * profile lock is held until the archive is stored, however long that takes.
 */
export class ProfileDirectories implements ProfileMaterializer {
  private readonly locks: ProfileLocks;
  constructor(
    private readonly deps: {
      db: Db;
      blobs: BlobStore;
      quota: StorageQuota;
      dataDir: string;
      /** Largest archive (PROFILE_MAX_BYTES). */
      maxArchiveBytes: number;
      /** Largest total of the files inside (PROFILE_MAX_EXPANDED_BYTES), as the upload enforces it. */
      maxExpandedBytes: number;
      logger: Logger;
    },
  ) {
    this.locks = new ProfileLocks(deps.db);
  }

  dirOf(sessionId: string): string {
    return path.join(this.deps.dataDir, 'profiles', sessionId);
  }

  /** Extracts the profile's archive (if it has one) into a fresh user-data directory; on any failure nothing stays on disk. */
  async materialize(source: ProfileSource, sessionId: string): Promise<string> {
    const dir = this.dirOf(sessionId);
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(dir, { recursive: true });
    try {
      const rec = await this.record(source);
      if (rec?.blobId) {
        const archive = await this.deps.blobs.get(rec.blobId);
        try {
          await validateAndExtract(archive, dir, { maxBytes: this.deps.maxExpandedBytes });
        } finally {
          // A refused archive is left half read: its file or cursor is closed now, not when collected.
          archive.destroy();
        }
        // A profile taken from a running Chromium still carries its lock files.
        await Promise.all(['SingletonLock', 'SingletonSocket', 'SingletonCookie'].map((f) => fs.rm(path.join(dir, f), { force: true })));
      }
    } catch (err) {
      await fs.rm(dir, { recursive: true, force: true });
      throw err;
    }
    return dir;
  }

  /**
   * Archives the directory back into storage (caches left out) and points the record at
   * it; the old archive goes. Runs under the session's profile lock, marked as archiving, so
   * the lock outlives the session until this is done. An archive over the limits or the
   * owner's quota is not stored: the previous one stays.
   */
  async persist(source: ProfileSource, sessionId: string): Promise<{ blobSize: number } | null> {
    const dir = this.dirOf(sessionId);
    try {
      await fs.access(dir);
    } catch {
      return null;
    }
    const log = this.deps.logger.child({ sessionId, profile: source.id });
    const rec = await this.record(source);
    if (!rec) {
      await fs.rm(dir, { recursive: true, force: true });
      return null;
    }
    if (!(await this.locks.beginArchive(source, sessionId))) {
      // The session's lock is gone (released as stale): another session may own the profile now.
      log.warn('profile lock no longer held; the profile is not archived back');
      await fs.rm(dir, { recursive: true, force: true });
      return null;
    }
    const renew = setInterval(() => {
      this.locks.renewArchive(source, sessionId).catch((err) => log.warn({ err: String(err) }, 'archive mark not renewed'));
    }, ARCHIVE_RENEW_MS);
    try {
      return await this.store(source, dir, rec, log);
    } catch (err) {
      if (isServiceError(err) && err.status === 413) {
        log.warn({ code: err.code, err: err.message }, 'profile not archived back; the previous archive stays');
        return null;
      }
      throw err;
    } finally {
      clearInterval(renew);
      await fs.rm(dir, { recursive: true, force: true });
      await this.locks.finishArchive(source, sessionId);
    }
  }

  async discard(sessionId: string): Promise<void> {
    await fs.rm(this.dirOf(sessionId), { recursive: true, force: true });
  }

  private async store(source: ProfileSource, dir: string, rec: ProfileRecord, log: Logger): Promise<{ blobSize: number } | null> {
    const blob = await putWithinQuota(this.deps, createArchive(dir, { exclude: isRegenerable, maxBytes: this.deps.maxExpandedBytes }), {
      filename: `${source.kind}-${source.id}.tar.gz`,
      contentType: 'application/gzip',
      userId: source.userId,
      perFile: this.deps.maxArchiveBytes,
      // The archive it replaces goes once this one is recorded.
      freedOnSuccess: rec.blobSize ?? 0,
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
      return null;
    }
    if (rec.blobId && rec.blobId !== blob.blobId) await this.deps.blobs.delete(rec.blobId).catch(() => undefined);
    log.info({ blobSize: blob.size }, 'profile archived');
    return { blobSize: blob.size };
  }

  private record(source: ProfileSource): Promise<ProfileRecord | null> {
    return this.deps.db.collection<ProfileRecord>(COLLECTION[source.kind]).findOne({ _id: source.id, userId: source.userId });
  }
}
