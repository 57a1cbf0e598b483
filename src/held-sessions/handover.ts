/**
 * A browser worker that is told to stop hands its sessions over: it takes no new ones, lets
 * each running step end, saves what the next worker needs and ends each session's lease as
 * "handed over", so its workflow moves it at once instead of waiting for the lease to time out.
 * This is the bookkeeping of it; HeldSessions does the saving and the releasing.
 */

/** How a session's lease on this worker ended: its browser closed, the workflow let it go, or it was handed over. */
export type HoldEnd = 'closed' | 'cancelled' | 'handed_over';

/** How long a step that arrives after its session left waits for the workflow to cancel it. */
const LATE_STEP_WAIT_MS = 5000;

export class Handover {
  #draining = false;
  #graceMs = 0;
  readonly #running = new Map<string, number>();
  readonly #idleWaiters = new Map<string, (() => void)[]>();
  /** The handover of each session that began, settled once its lease was ended. */
  readonly #leaving = new Map<string, Promise<void>>();
  /** The leases to end, per session (a run that continued as new may hold a second one). */
  readonly #leases = new Map<string, Set<AbortController>>();

  /** Whether the worker is stopping: it takes no session and no step. */
  get draining(): boolean {
    return this.#draining;
  }

  /** How long a running step is waited for before its session is handed over all the same. */
  get graceMs(): number {
    return this.#graceMs;
  }

  drain(graceMs: number): void {
    this.#draining = true;
    this.#graceMs = graceMs;
  }

  /** Runs one step of the session, counted while it runs. */
  async step<T>(sessionId: string, run: () => Promise<T>): Promise<T> {
    this.#running.set(sessionId, (this.#running.get(sessionId) ?? 0) + 1);
    try {
      return await run();
    } finally {
      const left = (this.#running.get(sessionId) ?? 1) - 1;
      if (left > 0) this.#running.set(sessionId, left);
      else this.#stepsEnded(sessionId);
    }
  }

  /** Resolves once no step of the session runs, or after `ms`. */
  idle(sessionId: string, ms: number): Promise<void> {
    if (!this.#running.has(sessionId)) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      const waiters = this.#idleWaiters.get(sessionId) ?? [];
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.#idleWaiters.set(sessionId, waiters);
    });
  }

  /** The session's handover: `work` runs once per session, however often it is asked. */
  leave(sessionId: string, work: () => Promise<void>): Promise<void> {
    let leaving = this.#leaving.get(sessionId);
    if (!leaving) {
      leaving = work().finally(() => this.#endLeases(sessionId));
      this.#leaving.set(sessionId, leaving);
    }
    return leaving;
  }

  /** Whether the session was handed over (its state saved, its lease ended as such). */
  handedOver(sessionId: string): boolean {
    return this.#leaving.has(sessionId);
  }

  /** A lease of the session begins: it ends when the signal says so or the session is handed over. */
  lease(sessionId: string, signal: AbortSignal): { signal: AbortSignal; end(): void } {
    const own = new AbortController();
    const abort = () => own.abort();
    if (signal.aborted) own.abort();
    else signal.addEventListener('abort', abort, { once: true });
    const leases = this.#leases.get(sessionId) ?? new Set();
    leases.add(own);
    this.#leases.set(sessionId, leases);
    return {
      signal: own.signal,
      end: () => {
        signal.removeEventListener('abort', abort);
        leases.delete(own);
        if (!leases.size && this.#leases.get(sessionId) === leases) this.#leases.delete(sessionId);
      },
    };
  }

  /**
   * A step sent to a worker that is stopping is not taken: it waits until its session was
   * handed over and its workflow cancels it (answered as a cancelled step that spent
   * nothing), or fails as a lost instance if no cancellation comes.
   */
  async refuseStep(sessionId: string, signal: AbortSignal): Promise<'cancelled' | 'lost'> {
    await this.#leaving.get(sessionId)?.catch(() => undefined);
    if (signal.aborted) return 'cancelled';
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, LATE_STEP_WAIT_MS);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    return signal.aborted ? 'cancelled' : 'lost';
  }

  #stepsEnded(sessionId: string): void {
    this.#running.delete(sessionId);
    const waiters = this.#idleWaiters.get(sessionId) ?? [];
    this.#idleWaiters.delete(sessionId);
    for (const wake of waiters) wake();
  }

  #endLeases(sessionId: string): void {
    for (const lease of this.#leases.get(sessionId) ?? []) lease.abort();
  }
}
