import type { Collection, Db } from 'mongodb';
import { checkSealingKey, seal, unseal } from './sealing';

/** What it takes to bring a session's browser back on another worker: the page and its storage. */
export interface BrowserSnapshot {
  url: string;
  /** Playwright storage state (cookies and local storage per origin), as JSON text. */
  storageState: string;
}

/** Sealed under the payload key (sealing.ts): cookies and storage are never in the database in clear. */
interface SnapshotRecord {
  _id: string;
  sealed: string;
  takenAt: Date;
}

export class SnapshotsRepository {
  private readonly snapshots: Collection<SnapshotRecord>;
  constructor(
    db: Db,
    private readonly key?: Buffer,
  ) {
    if (key) checkSealingKey(key);
    this.snapshots = db.collection<SnapshotRecord>('browserSnapshots');
  }

  private sealingKey(): Buffer {
    if (!this.key) throw new Error('browser snapshots need the payload key');
    return this.key;
  }

  async save(sessionId: string, url: string, storageState: string): Promise<void> {
    const sealed = seal(this.sealingKey(), { url, storageState } satisfies BrowserSnapshot);
    await this.snapshots.updateOne({ _id: sessionId }, { $set: { sealed, takenAt: new Date() } }, { upsert: true });
  }

  async get(sessionId: string): Promise<BrowserSnapshot | null> {
    const record = await this.snapshots.findOne({ _id: sessionId });
    return record?.sealed ? unseal<BrowserSnapshot>(this.sealingKey(), record.sealed) : null;
  }

  async remove(sessionId: string): Promise<void> {
    await this.snapshots.deleteOne({ _id: sessionId });
  }
}
