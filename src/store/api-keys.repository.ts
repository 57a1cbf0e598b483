import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { newId } from './ids';

export interface ApiKeyRecord {
  _id: string;
  userId: string;
  /** SHA-256 of the key; the key itself is shown once and never stored. */
  hash: string;
  /** First characters, so an operator can tell keys apart. */
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
  /** After this instant the key is refused with API_KEY_EXPIRED; null or absent: it never expires. */
  expiresAt?: Date | null;
}

/** Keys carry 256 random bits, so a fast hash is enough to make a stolen table useless. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export class ApiKeysRepository {
  private readonly keys: Collection<ApiKeyRecord>;
  constructor(db: Db) {
    this.keys = db.collection<ApiKeyRecord>('apiKeys');
  }

  async create(userId: string, opts: { expiresAt?: Date | null } = {}): Promise<{ key: string; record: ApiKeyRecord }> {
    const key = `bas_${randomBytes(32).toString('base64url')}`;
    const record: ApiKeyRecord = { _id: newId('key'), userId, hash: hashApiKey(key), prefix: key.slice(0, 10), createdAt: new Date(), revokedAt: null, expiresAt: opts.expiresAt ?? null };
    await this.keys.insertOne(record);
    return { key, record };
  }

  /** The key unless revoked; an expired one is answered too, so the caller can say it expired. */
  findActive(key: string): Promise<ApiKeyRecord | null> {
    return this.keys.findOne({ hash: hashApiKey(key), revokedAt: null });
  }

  /** Revokes by the key itself or by its id; true when a live key was revoked. */
  async revoke(keyOrId: string): Promise<boolean> {
    const filter = keyOrId.startsWith('key_') ? { _id: keyOrId } : { hash: hashApiKey(keyOrId) };
    const res = await this.keys.updateOne({ ...filter, revokedAt: null }, { $set: { revokedAt: new Date() } });
    return res.modifiedCount === 1;
  }

  listForUser(userId: string): Promise<ApiKeyRecord[]> {
    return this.keys.find({ userId }, { projection: { hash: 0 } }).toArray();
  }
}
