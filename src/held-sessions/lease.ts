import type { BrowserPool } from '../browser/pool';
import type { Logger } from '../logger';
import type { Store } from '../store/store';

/** How often a held session is looked at: its page and storage are saved when they changed since, for a restore elsewhere. */
const SNAPSHOT_CHECK_MS = 2000;
/** A session whose pages sent nothing and did not navigate is saved this often all the same (a page script may change its storage). */
const SNAPSHOT_QUIET_MS = 30_000;
/** How long a lease whose run is gone waits for the run that continued it as new. */
const LEASE_HANDOVER_MS = 15_000;

/** The leases held per session: a session's run that continued as new holds one of its own. */
export class Leases {
  private readonly running = new Map<string, number>();

  take(sessionId: string): void {
    this.running.set(sessionId, (this.running.get(sessionId) ?? 0) + 1);
  }

  give(sessionId: string): void {
    const left = (this.running.get(sessionId) ?? 1) - 1;
    if (left > 0) this.running.set(sessionId, left);
    else this.running.delete(sessionId);
  }

  /** Whether another lease of the session starts within the time a new run takes to begin. */
  async newer(sessionId: string): Promise<boolean> {
    for (let waited = 0; waited < LEASE_HANDOVER_MS; waited += 250) {
      if ((this.running.get(sessionId) ?? 0) > 1) return true;
      await sleep(250);
    }
    return (this.running.get(sessionId) ?? 0) > 1;
  }
}

export interface SnapshotDeps {
  pool: BrowserPool;
  store: Store;
  /** A page address or a site's storage may hold a typed secret: stored masked. */
  mask: (sessionId: string, text: string) => string;
  logger: Logger;
}

/**
 * Saves the session's page address and storage, for a restore on another worker, while its
 * browser is here and the signal has not stopped it: an idle session costs no snapshot, only
 * one whose pages changed since the last (or long ago). Answers why it ended.
 */
export async function keepSnapshots(sessionId: string, deps: SnapshotDeps, signal: AbortSignal): Promise<'closed' | 'cancelled'> {
  let saved = '';
  let takenAt = 0;
  while (!signal.aborted) {
    if (!deps.pool.has(sessionId)) return 'closed';
    const changedAt = deps.pool.get(sessionId)?.changedAt ?? Date.now();
    if (changedAt >= takenAt || Date.now() - takenAt >= SNAPSHOT_QUIET_MS) {
      takenAt = Date.now();
      saved = await saveSnapshot(sessionId, deps, saved);
    }
    await sleepUnless(SNAPSHOT_CHECK_MS, signal);
  }
  return 'cancelled';
}

/** Stores the session's snapshot when it differs from the one saved last; answers what is saved now. */
export async function saveSnapshot(sessionId: string, deps: SnapshotDeps, saved: string): Promise<string> {
  try {
    const taken = await deps.pool.snapshot(sessionId);
    const snap = taken && { url: deps.mask(sessionId, taken.url), storageState: deps.mask(sessionId, taken.storageState) };
    const key = snap ? `${snap.url}\n${snap.storageState}` : '';
    if (snap && key !== saved) {
      await deps.store.snapshots.save(sessionId, snap.url, snap.storageState);
      return key;
    }
  } catch (err) {
    deps.logger.debug({ sessionId, err: String(err) }, 'snapshot skipped');
  }
  return saved;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits the time, or less when the signal stops it first. */
function sleepUnless(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
