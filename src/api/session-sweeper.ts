/**
 * Frees what a session workflow that is gone left held: its concurrent-session slot and
 * its profile lock; removes what ended sessions saved to come back elsewhere (saved-state.ts). A workflow terminated from the Temporal UI, or one that failed between
 * steps, never runs its own end (endSession), so without this its owner would stay at
 * SESSION_LIMIT_REACHED or PROFILE_IN_USE. Each API process runs it periodically; every
 * step is idempotent, so several instances may sweep at once.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { ConnectionEvent } from '../contracts/events';
import type { Logger } from '../logger';
import { ProfileLocks } from '../store/profile-locks';
import { sweepSavedState } from '../store/saved-state';
import { LIVE_SESSION_STATUSES, type SessionRecord } from '../store/sessions.repository';
import type { Store } from '../store/store';
import { sessionWorkflowId } from '../contracts/session-messages';
import type { EndReason, SessionStatus } from '../contracts/session-types';

/** A live record whose workflow does not exist is left alone this long (the API creates the record just before the workflow). */
const MISSING_WORKFLOW_GRACE_MS = 2 * 60 * 1000;
/** A lock without a session record is left alone this long (the API takes the lock just before it creates the record). */
const ORPHAN_LOCK_GRACE_MS = 2 * 60 * 1000;
/** A slot count is corrected only after it has disagreed with the sessions, unchanged, for at least this long. */
const SLOT_GRACE_MS = 60 * 1000;

export interface SessionSweepDeps {
  temporal: Client;
  store: Store;
  /** Tells the session's sockets it ended. */
  events?: { connection(sessionId: string, e: ConnectionEvent): Promise<unknown> };
  logger: Logger;
}

export interface SessionSweepResult {
  sessionsEnded: number;
  locksReleased: number;
  slotsCorrected: number;
  /** Snapshots, hibernation records and masked values of sessions that ended, removed. */
  savedStatesRemoved: number;
}

/** What became of a workflow, for a live session record: null while it runs (or cannot be told). */
type Closed = { status: SessionStatus; reason: EndReason; why: string };

export class SessionSweeper {
  private readonly locks: ProfileLocks;
  private readonly logger: Logger;
  /** Slot counts seen to disagree in the previous sweep, by user. */
  private suspects = new Map<string, { activeSessions: number; updatedAt: number; holding: number }>();

  constructor(private readonly deps: SessionSweepDeps) {
    this.locks = new ProfileLocks(deps.store.db);
    this.logger = deps.logger.child({ component: 'session-sweeper' });
  }

  async sweep(now = new Date()): Promise<SessionSweepResult> {
    const sessionsEnded = await this.endClosedSessions(now);
    const locksReleased = await this.releaseLeftLocks(now);
    const slotsCorrected = await this.correctSlotCounts(now);
    const savedStatesRemoved = await sweepSavedState(this.deps.store.db, this.deps.store.sessions, now);
    if (sessionsEnded || locksReleased || slotsCorrected || savedStatesRemoved) this.logger.info({ sessionsEnded, locksReleased, slotsCorrected, savedStatesRemoved }, 'session sweep');
    return { sessionsEnded, locksReleased, slotsCorrected, savedStatesRemoved };
  }

  /** Live records whose workflow is closed (asked of Temporal, never assumed) are ended, and their slot given back. */
  private async endClosedSessions(now: Date): Promise<number> {
    const { store } = this.deps;
    let ended = 0;
    let after: string | undefined;
    for (;;) {
      const page = await store.sessions.liveBefore(now, 200, after);
      if (!page.length) return ended;
      after = page[page.length - 1]._id;
      for (const rec of page) {
        const closed = await this.closedWorkflow(rec, now);
        if (!closed) continue;
        // Ended once: the call that flips holdsSlot gives the slot back.
        if (await store.sessions.end(rec._id, closed.status, closed.reason)) await store.users.releaseSessionSlot(rec.userId);
        await store.tasks.failUnfinished(rec._id, 'INSTANCE_LOST', `The session ended unexpectedly (${closed.why})`, now);
        await store.events.markExpiry(rec._id, new Date(now.getTime() + 60 * 60 * 1000));
        await this.deps.events?.connection(rec._id, { event: 'end_session', reason: closed.reason }).catch((err) => this.logger.warn({ err: String(err), sessionId: rec._id }, 'end_session not published'));
        this.logger.warn({ sessionId: rec._id, userId: rec.userId, why: closed.why }, 'session freed: its workflow is gone');
        ended++;
      }
    }
  }

  private async closedWorkflow(rec: SessionRecord, now: Date): Promise<Closed | null> {
    try {
      const desc = await this.deps.temporal.workflow.getHandle(sessionWorkflowId(rec._id)).describe();
      switch (desc.status.name) {
        case 'RUNNING':
        case 'CONTINUED_AS_NEW':
        case 'UNSPECIFIED':
        case 'UNKNOWN':
          return null;
        case 'TERMINATED':
          return { status: 'terminated', reason: 'terminated', why: 'its workflow was terminated' };
        case 'COMPLETED':
          return { status: 'completed', reason: 'completed', why: 'its workflow completed without ending it' };
        default:
          return { status: 'failed', reason: 'instance_lost', why: `its workflow ${desc.status.name.toLowerCase().replace('_', ' ')}` };
      }
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        if (rec.createdAt.getTime() > now.getTime() - MISSING_WORKFLOW_GRACE_MS) return null;
        return { status: 'failed', reason: 'instance_lost', why: 'its workflow does not exist' };
      }
      this.logger.warn({ err: String(err), sessionId: rec._id }, 'session workflow not described');
      return null;
    }
  }

  /**
   * Profile locks whose session has ended (or never got a record) are released, unless the
   * worker is still archiving the profile back (ProfileLocks.release leaves those). Mirrors
   * (`lockedBy`) that outlived their lock are cleared.
   */
  private async releaseLeftLocks(now: Date): Promise<number> {
    const { store } = this.deps;
    let released = 0;
    for (const lock of await this.locks.olderThan(now)) {
      const rec = await store.sessions.get(lock.sessionId);
      if (rec && LIVE_SESSION_STATUSES.includes(rec.status)) continue;
      if (!rec && lock.at.getTime() > now.getTime() - ORPHAN_LOCK_GRACE_MS) continue;
      if (await this.locks.release(lock.source, lock.sessionId, now)) {
        this.logger.warn({ sessionId: lock.sessionId, [`${lock.source.kind}Id`]: lock.source.id }, 'profile lock freed: its session has ended');
        released++;
      }
    }
    const mirrorsBefore = new Date(now.getTime() - ORPHAN_LOCK_GRACE_MS);
    await this.locks.clearStaleMirrors('environment', mirrorsBefore);
    await this.locks.clearStaleMirrors('profile', mirrorsBefore);
    return released;
  }

  /**
   * A user's slot count that disagrees with their sessions (a slot lost between taking it
   * and recording the session, or never given back) is set to what the sessions say, once
   * it has disagreed, unchanged, across two sweeps and for SLOT_GRACE_MS.
   */
  private async correctSlotCounts(now: Date): Promise<number> {
    const { store } = this.deps;
    const suspects = new Map<string, { activeSessions: number; updatedAt: number; holding: number }>();
    let corrected = 0;
    for (const u of await store.users.holdingSlots()) {
      const holding = await store.sessions.countHoldingSlots(u._id);
      if (holding === u.activeSessions) continue;
      const seen = { activeSessions: u.activeSessions, updatedAt: u.updatedAt.getTime(), holding };
      const before = this.suspects.get(u._id);
      const settled = u.updatedAt.getTime() < now.getTime() - SLOT_GRACE_MS;
      if (settled && before && before.activeSessions === seen.activeSessions && before.updatedAt === seen.updatedAt && before.holding === holding) {
        if (await store.users.correctSlots(u._id, holding, { activeSessions: u.activeSessions, updatedAt: u.updatedAt })) {
          this.logger.warn({ userId: u._id, from: u.activeSessions, to: holding }, 'session slot count corrected');
          corrected++;
        }
        continue;
      }
      suspects.set(u._id, seen);
    }
    this.suspects = suspects;
    return corrected;
  }
}

/** Sweeps every `intervalMs` until stopped; a sweep never overlaps the previous one. */
export function startSessionSweeper(deps: SessionSweepDeps, intervalMs: number): { stop(): Promise<void> } {
  const sweeper = new SessionSweeper(deps);
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = sweeper.sweep().catch((err) => deps.logger.warn({ err: String(err) }, 'session sweep failed'));
    void running.finally(() => {
      if (!stopped) timer = setTimeout(tick, intervalMs).unref();
    });
  };
  let timer = setTimeout(tick, intervalMs).unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
