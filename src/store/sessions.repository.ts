import type { Collection, Db } from 'mongodb';
import type { EndReason, SessionStatus } from '../contracts/session-types';

export interface SessionRecord {
  _id: string;
  userId: string;
  status: SessionStatus;
  workerId?: string;
  endReason?: EndReason;
  /** Whether this session still holds one of the user's concurrent-session slots. */
  holdsSlot: boolean;
  createdAt: Date;
  updatedAt: Date;
  endedAt?: Date;
}

export const LIVE_SESSION_STATUSES: SessionStatus[] = ['pending', 'active', 'orphaned'];
export const ENDED_SESSION_STATUSES: SessionStatus[] = ['completed', 'terminated', 'expired', 'failed'];

export class SessionsRepository {
  private readonly sessions: Collection<SessionRecord>;
  constructor(db: Db) {
    this.sessions = db.collection<SessionRecord>('sessions');
  }

  async create(id: string, userId: string): Promise<void> {
    const now = new Date();
    await this.sessions.insertOne({ _id: id, userId, status: 'pending', holdsSlot: true, createdAt: now, updatedAt: now });
  }

  get(id: string): Promise<SessionRecord | null> {
    return this.sessions.findOne({ _id: id });
  }

  countLive(userId: string): Promise<number> {
    return this.sessions.countDocuments({ userId, status: { $in: LIVE_SESSION_STATUSES } });
  }

  /** Live sessions of all users (an aggregate figure for the metrics). */
  countAllLive(): Promise<number> {
    return this.sessions.countDocuments({ status: { $in: LIVE_SESSION_STATUSES } });
  }

  async liveIds(userId: string): Promise<string[]> {
    const docs = await this.sessions.find({ userId, status: { $in: LIVE_SESSION_STATUSES } }, { projection: { _id: 1 } }).sort({ createdAt: 1 }).toArray();
    return docs.map((d) => d._id);
  }

  /** Live sessions created before `before`, oldest first, in pages after `afterId` (for the sweeper). */
  liveBefore(before: Date, limit = 500, afterId?: string): Promise<SessionRecord[]> {
    const filter: Record<string, unknown> = { status: { $in: LIVE_SESSION_STATUSES }, createdAt: { $lt: before } };
    if (afterId) filter._id = { $gt: afterId };
    return this.sessions.find(filter).sort({ _id: 1 }).limit(limit).toArray();
  }

  /** Ids of sessions that ended before `before` (the records' retention), at most `limit`. */
  async endedBefore(before: Date, limit: number): Promise<string[]> {
    const filter = { status: { $in: ENDED_SESSION_STATUSES }, $or: [{ endedAt: { $lt: before } }, { endedAt: { $exists: false }, updatedAt: { $lt: before } }] };
    const docs = await this.sessions.find(filter, { projection: { _id: 1 } }).limit(limit).toArray();
    return docs.map((d) => d._id);
  }

  /** Deletes session records by `_id`, one command for them all. */
  async deleteMany(ids: string[]): Promise<number> {
    if (!ids.length) return 0;
    return (await this.sessions.bulkWrite(ids.map((_id) => ({ deleteOne: { filter: { _id } } })), { ordered: false })).deletedCount;
  }

  /** How many of the user's sessions hold a slot (what `activeSessions` should say). */
  countHoldingSlots(userId: string): Promise<number> {
    return this.sessions.countDocuments({ userId, holdsSlot: true });
  }

  async markStatus(id: string, status: SessionStatus, workerId?: string): Promise<void> {
    await this.sessions.updateOne({ _id: id }, { $set: { status, updatedAt: new Date(), ...(workerId ? { workerId } : {}) } });
  }

  /** Ends the session; true only for the call that released its slot (so the slot is freed once). */
  async end(id: string, status: SessionStatus, reason: EndReason): Promise<boolean> {
    const now = new Date();
    const res = await this.sessions.updateOne({ _id: id, holdsSlot: true }, { $set: { status, endReason: reason, holdsSlot: false, endedAt: now, updatedAt: now } });
    if (res.modifiedCount === 1) return true;
    await this.sessions.updateOne({ _id: id }, { $set: { status, endReason: reason, updatedAt: now } });
    return false;
  }
}
