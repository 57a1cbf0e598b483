import type { Collection, Db } from 'mongodb';
import { newWebhookSecret } from '../webhooks/signing';

/** How long deliveries keep signing with the previous secret after a rotation. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

/** One user's webhook signing secret (`whsec_...`), keyed by the user id. */
export interface WebhookSecretRecord {
  _id: string;
  secret: string;
  createdAt: Date;
  /** The secret before the last rotation, still signing until `expiresAt`. */
  previous: { secret: string; expiresAt: Date } | null;
  rotatedAt: Date | null;
}

const MAX_CAS_TRIES = 5;

/**
 * Signing secrets. Created on first use (the API's GET or the first delivery); a rotation
 * is a compare-and-swap on the one document, so two rotations at once never lose a
 * secret that deliveries may still be signed with.
 */
export class WebhookSecretsRepository {
  private readonly col: Collection<WebhookSecretRecord>;
  constructor(db: Db) {
    this.col = db.collection<WebhookSecretRecord>('webhookSecrets');
  }

  async getOrCreate(userId: string): Promise<WebhookSecretRecord> {
    const existing = await this.col.findOne({ _id: userId });
    if (existing) return existing;
    const record: WebhookSecretRecord = { _id: userId, secret: newWebhookSecret(), createdAt: new Date(), previous: null, rotatedAt: null };
    try {
      await this.col.insertOne(record);
      return record;
    } catch (err) {
      // Another request created it first: that one is the secret.
      const winner = await this.col.findOne({ _id: userId });
      if (winner) return winner;
      throw err;
    }
  }

  /** Replaces the secret; the old one keeps signing for 24 hours. */
  async rotate(userId: string, now = new Date()): Promise<WebhookSecretRecord> {
    for (let i = 0; i < MAX_CAS_TRIES; i++) {
      const current = await this.getOrCreate(userId);
      const next: WebhookSecretRecord = {
        _id: userId,
        secret: newWebhookSecret(),
        createdAt: now,
        previous: { secret: current.secret, expiresAt: new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS) },
        rotatedAt: now,
      };
      const res = await this.col.updateOne({ _id: userId, secret: current.secret }, { $set: { secret: next.secret, createdAt: next.createdAt, previous: next.previous, rotatedAt: now } });
      if (res.modifiedCount === 1) return next;
    }
    throw new Error('the webhook secret changed during every rotation attempt');
  }

  /** The secrets a delivery signs with now: the current one, and the previous one within its 24 hours. */
  async signingSecrets(userId: string, now = Date.now()): Promise<string[]> {
    return activeSecrets(await this.getOrCreate(userId), now);
  }

  async remove(userId: string): Promise<void> {
    await this.col.deleteOne({ _id: userId });
  }
}

export function activeSecrets(record: WebhookSecretRecord, now = Date.now()): string[] {
  const out = [record.secret];
  if (record.previous && record.previous.expiresAt.getTime() > now) out.push(record.previous.secret);
  return out;
}
