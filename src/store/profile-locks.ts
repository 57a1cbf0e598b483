import type { Db } from 'mongodb';
import type { ProfileSource } from '../profiles/contracts';

export const PROFILE_COLLECTION: Record<ProfileSource['kind'], string> = { environment: 'environments', profile: 'profiles' };

interface LockedRecord {
  _id: string;
  userId: string;
  lockedBy?: string | null;
}

/**
 * One live session per profile: the lock is a field of the profile's record, taken and
 * released with single-document updates.
 */
export class ProfileLocks {
  constructor(private readonly db: Db) {}

  /** Takes the lock for a session; 'missing' when the record is not the user's, 'busy' when another session holds it. */
  async acquire(source: ProfileSource, sessionId: string): Promise<'ok' | 'missing' | 'busy'> {
    const col = this.db.collection<LockedRecord>(PROFILE_COLLECTION[source.kind]);
    const taken = await col.findOneAndUpdate(
      { _id: source.id, userId: source.userId, $or: [{ lockedBy: null }, { lockedBy: { $exists: false } }] },
      { $set: { lockedBy: sessionId, lockedAt: new Date() } },
    );
    if (taken) return 'ok';
    return (await col.findOne({ _id: source.id, userId: source.userId })) ? 'busy' : 'missing';
  }

  async release(source: ProfileSource, sessionId: string): Promise<void> {
    await this.db.collection<LockedRecord>(PROFILE_COLLECTION[source.kind]).updateOne({ _id: source.id, lockedBy: sessionId }, { $set: { lockedBy: null } });
  }
}
