import type { Collection, Db } from 'mongodb';

/** What it takes to bring a session's browser back on another worker: the page and its storage. */
export interface BrowserSnapshot {
  _id: string;
  url: string;
  /** Playwright storage state (cookies and local storage per origin), as JSON text. */
  storageState: string;
  takenAt: Date;
}

export class SnapshotsRepository {
  private readonly snapshots: Collection<BrowserSnapshot>;
  constructor(db: Db) {
    this.snapshots = db.collection<BrowserSnapshot>('browserSnapshots');
  }

  async save(sessionId: string, url: string, storageState: string): Promise<void> {
    await this.snapshots.updateOne({ _id: sessionId }, { $set: { url, storageState, takenAt: new Date() } }, { upsert: true });
  }

  get(sessionId: string): Promise<BrowserSnapshot | null> {
    return this.snapshots.findOne({ _id: sessionId });
  }

  async remove(sessionId: string): Promise<void> {
    await this.snapshots.deleteOne({ _id: sessionId });
  }
}
