import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './doc-locks';
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

/**
 * What a request's key is checked against, stored under the key's hash as its `_id`: the
 * one lookup every authenticated request makes is by `_id`, which every store answers
 * without reading the others (the embedded FerretDB scans a collection for any other
 * field, so a lookup by `hash` grew with the number of keys).
 */
interface ApiKeyLookup {
  _id: string;
  keyId: string;
  userId: string;
  revokedAt: Date | null;
  expiresAt: Date | null;
}

/** What authentication needs of a key. */
export type ActiveApiKey = Pick<ApiKeyRecord, '_id' | 'userId' | 'expiresAt'>;

export class ApiKeysRepository {
  private readonly keys: Collection<ApiKeyRecord>;
  private readonly lookup: Collection<ApiKeyLookup>;
  constructor(db: Db) {
    this.keys = db.collection<ApiKeyRecord>('apiKeys');
    this.lookup = db.collection<ApiKeyLookup>('apiKeyLookup');
  }

  async create(userId: string, opts: { expiresAt?: Date | null } = {}): Promise<{ key: string; record: ApiKeyRecord }> {
    const key = `bas_${randomBytes(32).toString('base64url')}`;
    const record: ApiKeyRecord = { _id: newId('key'), userId, hash: hashApiKey(key), prefix: key.slice(0, 10), createdAt: new Date(), revokedAt: null, expiresAt: opts.expiresAt ?? null };
    await this.keys.insertOne(record);
    try {
      await this.lookup.insertOne(lookupOf(record));
    } catch (err) {
      await this.keys.deleteOne({ _id: record._id });
      throw err;
    }
    return { key, record };
  }

  /**
   * Keys stored before the lookup existed get their lookup entry: once per database (a
   * marker in `migrations` says it ran), idempotent if two processes run it at once.
   * Returns how many were added.
   */
  async backfillLookup(migrations: Collection<{ _id: string; at: Date }>): Promise<number> {
    if (await migrations.findOne({ _id: 'apiKeyLookup' })) return 0;
    const known = new Set((await this.lookup.find({}, { projection: { keyId: 1 } }).toArray()).map((l) => l.keyId));
    let added = 0;
    for await (const record of this.keys.find({})) {
      if (known.has(record._id)) continue;
      try {
        await this.lookup.insertOne(lookupOf(record));
        added += 1;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err; // another process added it meanwhile
      }
    }
    await migrations.updateOne({ _id: 'apiKeyLookup' }, { $setOnInsert: { at: new Date() } }, { upsert: true });
    return added;
  }

  /** The key unless revoked; an expired one is answered too, so the caller can say it expired. */
  async findActive(key: string): Promise<ActiveApiKey | null> {
    const found = await this.lookup.findOne({ _id: hashApiKey(key) });
    if (!found || found.revokedAt) return null;
    return { _id: found.keyId, userId: found.userId, expiresAt: found.expiresAt };
  }

  /** Revokes by the key itself or by its id; true when a live key was revoked. */
  async revoke(keyOrId: string): Promise<boolean> {
    const keyId = keyOrId.startsWith('key_') ? keyOrId : (await this.lookup.findOne({ _id: hashApiKey(keyOrId) }))?.keyId;
    const record = keyId ? await this.keys.findOne({ _id: keyId }) : null;
    if (!record) return false;
    const revokedAt = new Date();
    // The lookup first: from here on the key no longer authenticates, whatever happens next.
    const lookup = await this.lookup.updateOne({ _id: record.hash, revokedAt: null }, { $set: { revokedAt } });
    const res = await this.keys.updateOne({ _id: record._id, revokedAt: null }, { $set: { revokedAt } });
    return res.modifiedCount === 1 || lookup.modifiedCount === 1;
  }

  listForUser(userId: string): Promise<ApiKeyRecord[]> {
    return this.keys.find({ userId }, { projection: { hash: 0 } }).toArray();
  }
}

const lookupOf = (record: ApiKeyRecord): ApiKeyLookup => ({ _id: record.hash, keyId: record._id, userId: record.userId, revokedAt: record.revokedAt, expiresAt: record.expiresAt ?? null });
