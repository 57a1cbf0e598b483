import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';

/**
 * Hibernated sessions: what a session waiting for a person saved when it let its browser go
 * (storage, tabs, typed values, the agent's conversation), sealed with AES-256-GCM under the
 * installation's payload key, so the database never holds it in clear. Removed when the
 * session wakes or ends.
 */
interface HibernationRecord {
  _id: string;
  /** base64 of iv (12 bytes) | ciphertext | tag (16 bytes). */
  sealed: string;
  takenAt: Date;
}

export class HibernationsRepository {
  private readonly records: Collection<HibernationRecord>;
  constructor(
    db: Db,
    private readonly key: Buffer,
  ) {
    if (key.length !== 32) throw new Error('the sealing key must be 32 bytes');
    this.records = db.collection<HibernationRecord>('hibernations');
  }

  async save(sessionId: string, state: unknown): Promise<number> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([iv, cipher.update(JSON.stringify(state), 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64');
    await this.records.updateOne({ _id: sessionId }, { $set: { sealed, takenAt: new Date() } }, { upsert: true });
    return sealed.length;
  }

  async get<T>(sessionId: string): Promise<T | null> {
    const record = await this.records.findOne({ _id: sessionId });
    if (!record) return null;
    const buf = Buffer.from(record.sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, buf.subarray(0, 12));
    decipher.setAuthTag(buf.subarray(buf.length - 16));
    return JSON.parse(Buffer.concat([decipher.update(buf.subarray(12, buf.length - 16)), decipher.final()]).toString('utf8')) as T;
  }

  async remove(sessionId: string): Promise<void> {
    await this.records.deleteOne({ _id: sessionId });
  }
}
