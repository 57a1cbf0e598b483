import type { Collection, Db } from 'mongodb';
import type { PolicyFields, PolicyRecord } from '../contracts/policy-rules';
import { isDuplicateKey } from './doc-locks';
import { newId } from './ids';

/** An automation policy of a user (`/policies`). */
export class PoliciesRepository {
  private readonly col: Collection<PolicyRecord>;
  private indexed?: Promise<unknown>;

  constructor(db: Db) {
    this.col = db.collection<PolicyRecord>('policies');
  }

  private ensureIndexes(): Promise<unknown> {
    this.indexed ??= this.col.createIndex({ userId: 1, slot: 1 }, { unique: true }).catch((err) => {
      this.indexed = undefined;
      throw err;
    });
    return this.indexed;
  }

  /** Inserts into the first free slot of the user's `limit`; null when all are taken. */
  async create(userId: string, fields: PolicyFields, limit: number): Promise<PolicyRecord | null> {
    await this.ensureIndexes();
    const used = new Set((await this.col.find({ userId }, { projection: { slot: 1 } }).toArray()).map((d) => d.slot));
    const now = new Date();
    for (let slot = 0; slot < limit; slot++) {
      if (used.has(slot)) continue;
      const record: PolicyRecord = { _id: newId('pol'), userId, slot, ...fields, createdAt: now, updatedAt: now };
      try {
        await this.col.insertOne(record);
        return record;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
    return null;
  }

  get(id: string, userId: string): Promise<PolicyRecord | null> {
    return this.col.findOne({ _id: id, userId });
  }

  list(userId: string): Promise<PolicyRecord[]> {
    return this.col.find({ userId }).sort({ createdAt: 1, _id: 1 }).toArray();
  }

  async update(id: string, userId: string, fields: Partial<PolicyFields>): Promise<PolicyRecord | null> {
    return this.col.findOneAndUpdate({ _id: id, userId }, { $set: { ...fields, updatedAt: new Date() } }, { returnDocument: 'after' });
  }

  async remove(id: string, userId: string): Promise<boolean> {
    return (await this.col.deleteOne({ _id: id, userId })).deletedCount === 1;
  }
}
