import type { Collection, Db } from 'mongodb';
import { checkSealingKey, seal, unseal } from './sealing';

/**
 * Hibernated sessions: what a session waiting for a person saved when it let its browser go
 * (storage, tabs, typed values, the agent's conversation), sealed under the installation's
 * payload key (sealing.ts), so the database never holds it in clear. Removed when the
 * session wakes or ends (saved-state.ts).
 */
interface HibernationRecord {
  _id: string;
  sealed: string;
  takenAt: Date;
}

export class HibernationsRepository {
  private readonly records: Collection<HibernationRecord>;
  constructor(
    db: Db,
    private readonly key: Buffer,
  ) {
    checkSealingKey(key);
    this.records = db.collection<HibernationRecord>('hibernations');
  }

  async save(sessionId: string, state: unknown): Promise<number> {
    const sealed = seal(this.key, state);
    await this.records.updateOne({ _id: sessionId }, { $set: { sealed, takenAt: new Date() } }, { upsert: true });
    return sealed.length;
  }

  async get<T>(sessionId: string): Promise<T | null> {
    const record = await this.records.findOne({ _id: sessionId });
    return record ? unseal<T>(this.key, record.sealed) : null;
  }

  async remove(sessionId: string): Promise<void> {
    await this.records.deleteOne({ _id: sessionId });
  }
}
