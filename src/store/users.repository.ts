import type { Collection, Db } from 'mongodb';
import { newId } from './ids';

export interface UserRecord {
  _id: string;
  email: string;
  balance: number;
  status: 'active' | 'deactivated';
  sessionLimit: number;
  /** Sessions currently holding a slot; changed only by single-document atomic updates. */
  activeSessions: number;
  /** Tasks already charged (most recent), so a retried charge is a no-op. */
  chargedTasks: string[];
  createdAt: Date;
  updatedAt: Date;
}

const CHARGE_MEMORY = 500;

export class UsersRepository {
  private readonly users: Collection<UserRecord>;
  constructor(db: Db) {
    this.users = db.collection<UserRecord>('users');
  }

  async create(email: string, balance: number, sessionLimit: number): Promise<UserRecord> {
    const now = new Date();
    const user: UserRecord = { _id: newId('usr'), email, balance, status: 'active', sessionLimit, activeSessions: 0, chargedTasks: [], createdAt: now, updatedAt: now };
    await this.users.insertOne(user);
    return user;
  }

  get(id: string): Promise<UserRecord | null> {
    return this.users.findOne({ _id: id });
  }

  list(): Promise<UserRecord[]> {
    return this.users.find({}, { projection: { chargedTasks: 0 } }).sort({ createdAt: 1 }).toArray();
  }

  async topUp(id: string, amount: number): Promise<UserRecord | null> {
    return this.users.findOneAndUpdate({ _id: id }, { $inc: { balance: amount }, $set: { updatedAt: new Date() } }, { returnDocument: 'after' });
  }

  async setStatus(id: string, status: UserRecord['status']): Promise<UserRecord | null> {
    return this.users.findOneAndUpdate({ _id: id }, { $set: { status, updatedAt: new Date() } }, { returnDocument: 'after' });
  }

  async setSessionLimit(id: string, sessionLimit: number): Promise<UserRecord | null> {
    return this.users.findOneAndUpdate({ _id: id }, { $set: { sessionLimit, updatedAt: new Date() } }, { returnDocument: 'after' });
  }

  /** Takes a session slot if one is free; null when the limit is reached. */
  async acquireSessionSlot(id: string, limit: number): Promise<UserRecord | null> {
    return this.users.findOneAndUpdate({ _id: id, activeSessions: { $lt: limit } }, { $inc: { activeSessions: 1 } }, { returnDocument: 'after' });
  }

  async releaseSessionSlot(id: string): Promise<void> {
    await this.users.updateOne({ _id: id, activeSessions: { $gt: 0 } }, { $inc: { activeSessions: -1 } });
  }

  /**
   * Charges a task's cost once: the charge and the record of it are one atomic update of
   * the user document, so a retried activity finds the task already charged.
   */
  async chargeTask(id: string, taskId: string, cost: number): Promise<{ charged: boolean; balance: number | null }> {
    const after = await this.users.findOneAndUpdate(
      { _id: id, chargedTasks: { $ne: taskId } },
      { $inc: { balance: -cost }, $push: { chargedTasks: { $each: [taskId], $slice: -CHARGE_MEMORY } }, $set: { updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
    if (after) return { charged: true, balance: after.balance };
    const user = await this.get(id);
    return { charged: false, balance: user?.balance ?? null };
  }
}
