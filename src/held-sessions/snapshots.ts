import type { BrowserPool } from '../browser/pool';
import type { Logger } from '../logger';
import type { Store } from '../store/store';

/** A session whose pages sent nothing and did not navigate is saved this often all the same (a page script may change its storage). */
export const SNAPSHOT_QUIET_MS = 30_000;

export interface SnapshotDeps {
  pool: Pick<BrowserPool, 'get' | 'snapshot'>;
  store: Pick<Store, 'snapshots'>;
  /** A page address or a site's storage may hold a typed secret: stored masked. */
  mask: (sessionId: string, text: string) => string;
  logger: Logger;
}

/** Whether a session's state is saved again: its pages changed since it was last taken, or that was long ago. */
export function snapshotDue(changedAt: number, takenAt: number, now: number): boolean {
  return changedAt >= takenAt || now - takenAt >= SNAPSHOT_QUIET_MS;
}

/**
 * The page address and storage of each held session, saved for a restore on another worker
 * when they changed since the last save: by the lease every few seconds, and at the end of
 * each agent step, so what a finished step did is saved before its answer goes back. One
 * save at a time per session, in the order asked: an older state never overwrites a newer one.
 */
export class SessionSnapshots {
  readonly #last = new Map<string, { key: string; takenAt: number }>();
  readonly #queue = new Map<string, Promise<void>>();

  constructor(private readonly deps: SnapshotDeps) {}

  /** Saves the session's state when it is due; `always` when it is, changed or not (a handover). Never throws. */
  save(sessionId: string, always = false): Promise<void> {
    const next = (this.#queue.get(sessionId) ?? Promise.resolve()).then(() => this.#saveNow(sessionId, always));
    this.#queue.set(sessionId, next);
    void next.finally(() => {
      if (this.#queue.get(sessionId) === next) this.#queue.delete(sessionId);
    });
    return next;
  }

  /** The session's browser closed: its save under way ends, and what it saved is forgotten. */
  async forget(sessionId: string): Promise<void> {
    await this.#queue.get(sessionId);
    this.#last.delete(sessionId);
  }

  async #saveNow(sessionId: string, always: boolean): Promise<void> {
    const { pool, store, mask, logger } = this.deps;
    const last = this.#last.get(sessionId) ?? { key: '', takenAt: 0 };
    const takenAt = Date.now();
    if (!always && !snapshotDue(pool.get(sessionId)?.changedAt ?? takenAt, last.takenAt, takenAt)) return;
    try {
      const taken = await pool.snapshot(sessionId);
      if (!taken) return;
      const url = mask(sessionId, taken.url);
      const storageState = mask(sessionId, taken.storageState);
      const key = `${url}\n${storageState}`;
      if (always || key !== last.key) await store.snapshots.save(sessionId, url, storageState);
      this.#last.set(sessionId, { key, takenAt });
    } catch (err) {
      logger.debug({ sessionId, err: String(err) }, 'snapshot skipped');
    }
  }
}
