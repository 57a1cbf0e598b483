/**
 * A session without its browser (hibernation): while it waits for a person (task-loop.ts)
 * or, idle, for its next task (session.workflow.ts), its state is sealed on the worker and
 * the browser closed; it wakes on any worker. Deterministic: no I/O, no Node.
 */
import * as wf from '@temporalio/workflow';
import { lostInstance } from './failures';
import { publish } from './session-records';
import type { Session } from './session-parts';

/**
 * The browser is sealed away and closed; the worker's slot is free. False when the worker
 * could not, or the session is on a profile or environment: its directory is archived back
 * only when the session ends, as the profile's lock is held until then (another session
 * could take the profile while this one sleeps), so such a session waits with its browser.
 */
export async function hibernate(s: Session, taskId?: string): Promise<boolean> {
  const { input, state, lease } = s;
  if (input.profile) return false;
  let bytes = 0;
  try {
    ({ bytes } = await lease.browser().control.hibernateBrowser({ sessionId: state.sessionId, profile: input.profile }));
  } catch (err) {
    wf.log.warn('the session could not hibernate; it waits with its browser', { error: String(err) });
    return false;
  }
  lease.release();
  state.setHibernated(true, Date.now());
  await publish(state, { type: 'session_hibernated', taskId, data: { message: taskId ? 'Waiting for an answer without a browser; an answer or a takeover wakes the session' : 'Idle: the browser is let go until the next task or a takeover', bytes } });
  return true;
}

/** The session gets its browser back on any worker, as it was. */
export async function wake(s: Session, taskId?: string): Promise<void> {
  const { input, state, lease } = s;
  const woke = await lease.acquire('wake', [], Date.now() + input.orphanGraceMs);
  if (!woke) throw lostInstance();
  const sleptMs = Date.now() - (state.hibernatedSince ?? Date.now());
  state.setHibernated(false, Date.now());
  await publish(state, { type: 'session_resumed', taskId, data: { message: 'The session has its browser again', workerId: lease.worker?.workerId, sleptMs } });
}
