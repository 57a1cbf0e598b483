import type { Collection, Db } from 'mongodb';
import type { ProfileSource } from '../profiles/contracts';
import { isDuplicateKey } from './doc-locks';

export const PROFILE_COLLECTION: Record<ProfileSource['kind'], string> = { environment: 'environments', profile: 'profiles' };

interface LockedRecord {
  _id: string;
  userId: string;
  lockedBy?: string | null;
}

interface ProfileLock {
  _id: string;
  sessionId: string;
  at: Date;
}


/**
 * One live session per profile. The lock is a document keyed by the profile, inserted to
 * take it and deleted to release it: an insert is atomic on FerretDB as on MongoDB, where
 * a guarded update of the record is not (FerretDB 1.x lets two of them pass the same
 * guard). The record's `lockedBy` mirrors the holder for readers (uploads, listings).
 */
export class ProfileLocks {
  private readonly locks: Collection<ProfileLock>;
  constructor(private readonly db: Db) {
    this.locks = db.collection<ProfileLock>('profileLocks');
  }

  private key(source: ProfileSource): string {
    return `${source.kind}:${source.id}`;
  }

  /** Takes the lock for a session; 'missing' when the record is not the user's, 'busy' when another session holds it. */
  async acquire(source: ProfileSource, sessionId: string): Promise<'ok' | 'missing' | 'busy'> {
    const col = this.db.collection<LockedRecord>(PROFILE_COLLECTION[source.kind]);
    if (!(await col.findOne({ _id: source.id, userId: source.userId }, { projection: { _id: 1 } }))) return 'missing';
    try {
      await this.locks.insertOne({ _id: this.key(source), sessionId, at: new Date() });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // A retried acquire of the same session finds its own lock.
      const held = await this.locks.findOne({ _id: this.key(source) });
      if (held?.sessionId !== sessionId) return 'busy';
    }
    await col.updateOne({ _id: source.id }, { $set: { lockedBy: sessionId, lockedAt: new Date() } });
    return 'ok';
  }

  async release(source: ProfileSource, sessionId: string): Promise<void> {
    await this.locks.deleteOne({ _id: this.key(source), sessionId });
    await this.db.collection<LockedRecord>(PROFILE_COLLECTION[source.kind]).updateOne({ _id: source.id, lockedBy: sessionId }, { $set: { lockedBy: null } });
  }

  /** The session holding the profile, or null. */
  async holder(source: Pick<ProfileSource, 'kind' | 'id'>): Promise<string | null> {
    return (await this.locks.findOne({ _id: `${source.kind}:${source.id}` }))?.sessionId ?? null;
  }
}
