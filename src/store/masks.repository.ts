import type { Collection, Db } from 'mongodb';
import type { SecretEntry } from '../contracts/session-types';
import { checkSealingKey, seal, unseal } from './sealing';

/**
 * The values a session masks in all it sends out: the secrets of every task it ran and what
 * a person typed by hand into a secret field. They belong to the session, not to the worker
 * holding its browser: sealed here (sealing.ts) as they change, read back wherever the
 * session's browser opens again (a wake, a restore after a worker's loss), removed when the
 * session ends (saved-state.ts).
 */
export interface SessionMasks {
  /** Secrets given to the session's tasks. */
  given: SecretEntry[];
  /** Values only masked (typed by hand, one-time codes). */
  masked: SecretEntry[];
}

interface MasksRecord {
  _id: string;
  sealed: string;
  takenAt: Date;
}

export class MasksRepository {
  private readonly records: Collection<MasksRecord>;
  constructor(
    db: Db,
    private readonly key: Buffer,
  ) {
    checkSealingKey(key);
    this.records = db.collection<MasksRecord>('sessionMasks');
  }

  async save(sessionId: string, masks: SessionMasks): Promise<void> {
    await this.records.updateOne({ _id: sessionId }, { $set: { sealed: seal(this.key, masks), takenAt: new Date() } }, { upsert: true });
  }

  async get(sessionId: string): Promise<SessionMasks | null> {
    const record = await this.records.findOne({ _id: sessionId });
    return record ? unseal<SessionMasks>(this.key, record.sealed) : null;
  }
}
