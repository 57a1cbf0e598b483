import type { Collection, Db } from 'mongodb';
import { newWebhookSecret } from '../contracts/webhook-signing';
import { DocLocks } from './doc-locks';

/** How long deliveries keep signing with the previous secret after a rotation. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;
/** Replaced secrets kept (newest first): a delivery carries at most this many signatures more. */
export const MAX_PREVIOUS_SECRETS = 3;

/** One user's webhook signing secret (`whsec_...`), keyed by the user id. */
export interface WebhookSecretRecord {
  _id: string;
  secret: string;
  createdAt: Date;
  /** Secrets replaced in the last 24 hours, newest first, at most MAX_PREVIOUS_SECRETS, each still signing until its `expiresAt`. */
  previous: { secret: string; expiresAt: Date }[];
  rotatedAt: Date | null;
}

/** Records from before several previous secrets were kept held one, or none. */
function normalise(record: WebhookSecretRecord): WebhookSecretRecord {
  const previous = record.previous as unknown;
  return { ...record, previous: Array.isArray(previous) ? previous : previous ? [previous as { secret: string; expiresAt: Date }] : [] };
}

/**
 * Signing secrets. Created on first use (the API's GET or the first delivery); a rotation
 * runs under the user's lock, so two rotations at once never lose a secret that
 * deliveries may still be signed with.
 */
export class WebhookSecretsRepository {
  private readonly col: Collection<WebhookSecretRecord>;
  private readonly locks: DocLocks;
  constructor(db: Db) {
    this.col = db.collection<WebhookSecretRecord>('webhookSecrets');
    this.locks = new DocLocks(db);
  }

  async getOrCreate(userId: string): Promise<WebhookSecretRecord> {
    const existing = await this.col.findOne({ _id: userId });
    if (existing) return normalise(existing);
    const record: WebhookSecretRecord = { _id: userId, secret: newWebhookSecret(), createdAt: new Date(), previous: [], rotatedAt: null };
    try {
      await this.col.insertOne(record);
      return record;
    } catch (err) {
      // Another request created it first: that one is the secret.
      const winner = await this.col.findOne({ _id: userId });
      if (winner) return normalise(winner);
      throw err;
    }
  }

  /**
   * Replaces the secret; the replaced one (and the others replaced in the last 24 hours, at
   * most MAX_PREVIOUS_SECRETS in all, the oldest dropped first) keeps signing for 24 hours.
   */
  rotate(userId: string, now = new Date()): Promise<WebhookSecretRecord> {
    return this.locks.with(`webhookSecret:${userId}`, async () => {
      const current = await this.getOrCreate(userId);
      const next: WebhookSecretRecord = {
        _id: userId,
        secret: newWebhookSecret(),
        createdAt: now,
        previous: keptPrevious([{ secret: current.secret, expiresAt: new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS) }, ...current.previous], now.getTime()),
        rotatedAt: now,
      };
      await this.col.updateOne({ _id: userId }, { $set: { secret: next.secret, createdAt: next.createdAt, previous: next.previous, rotatedAt: now } });
      return next;
    });
  }

  /** The secrets a delivery signs with now: the current one, and those replaced within the last 24 hours. */
  async signingSecrets(userId: string, now = Date.now()): Promise<string[]> {
    return activeSecrets(await this.getOrCreate(userId), now);
  }

  async remove(userId: string): Promise<void> {
    await this.col.deleteOne({ _id: userId });
  }
}

export function activeSecrets(record: WebhookSecretRecord, now = Date.now()): string[] {
  return [record.secret, ...keptPrevious(normalise(record).previous, now).map((p) => p.secret)];
}

/** The replaced secrets still signing: not expired, newest first, at most MAX_PREVIOUS_SECRETS. */
export function keptPrevious(previous: WebhookSecretRecord['previous'], now: number): WebhookSecretRecord['previous'] {
  return previous.filter((p) => p.expiresAt.getTime() > now).slice(0, MAX_PREVIOUS_SECRETS);
}
