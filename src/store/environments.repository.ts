import type { Collection, Db } from 'mongodb';
import type { StoredChatConnection } from '../contracts/schemas/chat-connection.schema';
import { ArchiveRecords, type ArchiveRecord } from './profiles.repository';

/** An environment: a browser profile archive, attached files (in `files`) and an optional chat connection. */
export interface EnvironmentRecord extends ArchiveRecord {
  chat: StoredChatConnection | null;
}

export class EnvironmentsRepository extends ArchiveRecords<EnvironmentRecord> {
  private readonly environments: Collection<EnvironmentRecord>;
  constructor(db: Db) {
    super(db, 'environments', 'env');
    this.environments = db.collection<EnvironmentRecord>('environments');
  }

  create(userId: string, fields: { name: string; description?: string }, limit: number): Promise<EnvironmentRecord | null> {
    return this.insertWithin(userId, { ...fields, chat: null }, limit);
  }

  async setChat(id: string, userId: string, chat: StoredChatConnection): Promise<EnvironmentRecord | null> {
    return this.environments.findOneAndUpdate({ _id: id, userId }, { $set: { chat, updatedAt: new Date() } }, { returnDocument: 'after' });
  }

  /** True when there was a connection to remove. */
  async clearChat(id: string, userId: string): Promise<boolean> {
    const res = await this.environments.updateOne({ _id: id, userId, chat: { $ne: null } }, { $set: { chat: null, updatedAt: new Date() } });
    return res.modifiedCount === 1;
  }
}
