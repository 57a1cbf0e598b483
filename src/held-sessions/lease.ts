import type { BrowserPool } from '../browser/pool';
import type { SessionSnapshots } from './snapshots';

/** How often a held session is looked at: its page and storage are saved when they changed since, for a restore elsewhere. */
const SNAPSHOT_CHECK_MS = 2000;
/** How long a lease whose run is gone waits for the run that continued it as new, unless told otherwise. */
const LEASE_HANDOVER_MS = 15_000;

/** The leases held per session: a session's run that continued as new holds one of its own. */
export class Leases {
  private readonly running = new Map<string, number>();

  constructor(private readonly handoverMs = LEASE_HANDOVER_MS) {}

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
    for (let waited = 0; waited < this.handoverMs; waited += 250) {
      if ((this.running.get(sessionId) ?? 0) > 1) return true;
      await sleep(250);
    }
    return (this.running.get(sessionId) ?? 0) > 1;
  }
}

/**
 * Saves the session's page address and storage while its browser is here and the signal has
 * not stopped it: an idle session costs no snapshot, only one whose pages changed since the
 * last save (or long ago). Answers why it ended.
 */
export async function keepSnapshots(sessionId: string, deps: { pool: Pick<BrowserPool, 'has'>; snapshots: SessionSnapshots }, signal: AbortSignal): Promise<'closed' | 'cancelled'> {
  while (!signal.aborted) {
    if (!deps.pool.has(sessionId)) return 'closed';
    await deps.snapshots.save(sessionId);
    await sleepUnless(SNAPSHOT_CHECK_MS, signal);
  }
  return 'cancelled';
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
