import type { Collection, Db } from 'mongodb';
import type { ProfileSource } from '../contracts/profiles';
import { isDuplicateKey } from './doc-locks';

export const PROFILE_COLLECTION: Record<ProfileSource['kind'], string> = { environment: 'environments', profile: 'profiles' };

/** One upload at a time per record (see ArchiveRecords): a document keyed `<collection>:<id>` while an archive streams in. */
export const UPLOAD_LOCKS = 'archiveUploads';
/** An upload older than this is taken to be dead (its API process stopped). */
export const UPLOAD_STALE_MS = 2 * 60 * 60 * 1000;
/** An archive-back whose worker has not renewed it for this long is taken to be dead. */
export const ARCHIVE_STALE_MS = 2 * 60 * 1000;
/** How often a worker renews its archive-back while it runs. */
export const ARCHIVE_RENEW_MS = 15_000;

interface LockedRecord {
  _id: string;
  userId: string;
  lockedBy?: string | null;
}

export interface ProfileLock {
  /** `<kind>:<id>` of the profile or environment. */
  _id: string;
  sessionId: string;
  at: Date;
  /** Set while the worker archives the profile back at the session's end, renewed as it goes. */
  archivingAt?: Date | null;
}

/** A profile or environment, by kind and id (the owner is not needed to find its lock). */
export type LockTarget = Pick<ProfileSource, 'kind' | 'id'> & { userId?: string };

export const uploadLockId = (source: LockTarget) => `${PROFILE_COLLECTION[source.kind]}:${source.id}`;

/**
 * One live session per profile, and never during an upload of it. The lock is a document
 * keyed by the profile, inserted to take it and deleted to release it: an insert is atomic
 * on FerretDB as on MongoDB, where a guarded update of the record is not (FerretDB 1.x lets
 * two of them pass the same guard). A session and an upload each write their own lock
 * document first and look for the other's second, so of two that start together at least
 * one sees the other and backs off. The record's `lockedBy` mirrors the holder for readers.
 *
 * The lock lasts until the profile is really archived back: the worker marks the lock while
 * it archives, and a release at the session's end leaves a marked lock to the worker
 * (unless its mark is stale: the worker died).
 */
export class ProfileLocks {
  private readonly locks: Collection<ProfileLock>;
  private readonly uploads: Collection<{ _id: string; startedAt: Date }>;
  constructor(private readonly db: Db) {
    this.locks = db.collection<ProfileLock>('profileLocks');
    this.uploads = db.collection<{ _id: string; startedAt: Date }>(UPLOAD_LOCKS);
  }

  private key(source: LockTarget): string {
    return `${source.kind}:${source.id}`;
  }

  /**
   * Takes the lock for a session; 'missing' when the record is not the user's, 'busy' when
   * another session holds it, 'uploading' while an archive is being uploaded to it.
   */
  async acquire(source: ProfileSource, sessionId: string, now = new Date()): Promise<'ok' | 'missing' | 'busy' | 'uploading'> {
    const col = this.db.collection<LockedRecord>(PROFILE_COLLECTION[source.kind]);
    if (!(await col.findOne({ _id: source.id, userId: source.userId }, { projection: { _id: 1 } }))) return 'missing';
    try {
      await this.locks.insertOne({ _id: this.key(source), sessionId, at: now, archivingAt: null });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // A retried acquire of the same session finds its own lock.
      const held = await this.locks.findOne({ _id: this.key(source) });
      if (held?.sessionId !== sessionId) return 'busy';
    }
    const upload = await this.uploads.findOne({ _id: uploadLockId(source) });
    if (upload && upload.startedAt.getTime() > now.getTime() - UPLOAD_STALE_MS) {
      await this.locks.deleteOne({ _id: this.key(source), sessionId });
      return 'uploading';
    }
    await col.updateOne({ _id: source.id }, { $set: { lockedBy: sessionId, lockedAt: now } });
    return 'ok';
  }

  /**
   * Releases the session's lock at its end, unless its worker is still archiving the
   * profile back (the worker releases it when done). Answers whether the lock is gone.
   */
  async release(source: LockTarget, sessionId: string, now = new Date()): Promise<boolean> {
    const key = this.key(source);
    await this.locks.deleteOne({
      _id: key,
      sessionId,
      $or: [{ archivingAt: null }, { archivingAt: { $exists: false } }, { archivingAt: { $lt: new Date(now.getTime() - ARCHIVE_STALE_MS) } }],
    });
    if (await this.locks.findOne({ _id: key, sessionId }, { projection: { _id: 1 } })) return false;
    await this.clearMirror(source, sessionId);
    return true;
  }

  /** The worker starts archiving the profile back: false when the session no longer holds the lock (then it must not write). */
  async beginArchive(source: LockTarget, sessionId: string, now = new Date()): Promise<boolean> {
    const res = await this.locks.updateOne({ _id: this.key(source), sessionId }, { $set: { archivingAt: now } });
    return res.matchedCount === 1;
  }

  /** Renews the mark of a running archive-back. */
  async renewArchive(source: LockTarget, sessionId: string, now = new Date()): Promise<void> {
    await this.locks.updateOne({ _id: this.key(source), sessionId }, { $set: { archivingAt: now } });
  }

  /** The archive-back is done (or failed): the lock goes, whatever the session's state. */
  async finishArchive(source: LockTarget, sessionId: string): Promise<void> {
    await this.locks.deleteOne({ _id: this.key(source), sessionId });
    await this.clearMirror(source, sessionId);
  }

  /** The session holding the profile, or null. */
  async holder(source: LockTarget): Promise<string | null> {
    return (await this.locks.findOne({ _id: this.key(source) }))?.sessionId ?? null;
  }

  /** Every lock taken before `before` (for the sweeper), oldest first. */
  async olderThan(before: Date, limit = 500): Promise<(ProfileLock & { source: LockTarget })[]> {
    const docs = await this.locks.find({ at: { $lt: before } }).sort({ at: 1 }).limit(limit).toArray();
    return docs.flatMap((d) => {
      const at = d._id.indexOf(':');
      const kind = d._id.slice(0, at);
      return kind === 'environment' || kind === 'profile' ? [{ ...d, source: { kind, id: d._id.slice(at + 1) } }] : [];
    });
  }

  /**
   * Records whose `lockedBy` names a session that holds no lock on them (a mirror write
   * lost to a concurrent update of the record): the mirror is cleared.
   */
  async clearStaleMirrors(kind: ProfileSource['kind'], before: Date): Promise<number> {
    const col = this.db.collection<LockedRecord & { lockedAt?: Date }>(PROFILE_COLLECTION[kind]);
    let n = 0;
    for (const r of await col.find({ lockedBy: { $ne: null }, lockedAt: { $lt: before } }, { projection: { lockedBy: 1 } }).toArray()) {
      if (await this.locks.findOne({ _id: this.key({ kind, id: r._id }), sessionId: r.lockedBy! }, { projection: { _id: 1 } })) continue;
      n += (await col.updateOne({ _id: r._id, lockedBy: r.lockedBy }, { $set: { lockedBy: null } })).modifiedCount;
    }
    return n;
  }

  private async clearMirror(source: LockTarget, sessionId: string): Promise<void> {
    await this.db.collection<LockedRecord>(PROFILE_COLLECTION[source.kind]).updateOne({ _id: source.id, lockedBy: sessionId }, { $set: { lockedBy: null } });
  }
}
