/**
 * One durable workflow per browser session. Messages from the API arrive as updates
 * (handlers.ts), the agent works through activities pinned to the worker that holds the
 * browser (browser-lease.ts, task-loop.ts), and the state lives in a plain SessionState
 * object. Deterministic: no I/O, no Node.
 *
 * The order of the waits below is the order recorded histories hold: a change to it needs
 * wf.patched (see the README on replay tests).
 */
import * as wf from '@temporalio/workflow';
import { registerHandlers } from './handlers';
import { SessionStatusKey } from '../contracts/search-attributes';
import { openSession, type Session } from './session-parts';
import { records, setStatus } from './session-records';
import { runTask } from './task-loop';
import { hibernate, wake } from './hibernation';
import type { EndReason, SessionInput, SessionStatus, SessionView } from '../contracts/session-types';

export async function sessionWorkflow(input: SessionInput): Promise<SessionView> {
  const session = openSession(input);
  const { state, lease } = session;
  registerHandlers(session);

  if (input.carried) {
    state.setStatus('active');
    lease.carryOver(input.carried);
  } else if (await lease.acquire(false, [], Date.now())) {
    await setStatus(state, 'active');
  } else {
    return failToStart(session);
  }
  if (input.initialTask) {
    state.enqueueInitialTask(input.initialTask.taskId, input.initialTask.params, Date.now());
    // Asked to end while it got its browser (a client that left at once): the task ends stopped, then the session.
    if (state.endRequested) await runTask(session);
  }

  // The session's life: tasks as they come, a lost worker recovered, continue-as-new when
  // Temporal suggests it, the end when asked or after the idle timeout.
  for (;;) {
    if (lease.lost && !state.endRequested) await lease.recover();
    if (state.endRequested) return closeSession(session, state.endRequested);
    if (state.queued) {
      // A session discarded while idle wakes for its next task.
      if (state.hibernated && !(await wakeUp(session))) continue;
      await runTask(session);
      continue;
    }
    // (a session without its browser does not continue as new: the next run would not know it)
    if (wf.workflowInfo().continueAsNewSuggested && !state.hibernated) {
      await continueAsNewWhenQuiet(session);
      continue;
    }
    const idleLeft = state.lastActivityAt + input.idleTimeoutMs - Date.now();
    if (idleLeft <= 0) {
      state.requestEnd('expired');
      continue; // the loop head ends the session
    }
    // Sessions started before idle discards (or with them off) wait as they did.
    if (input.idleDiscardMs && wf.patched('discard-idle-sessions')) {
      await idleWait(session, idleLeft);
      continue;
    }
    await wf.condition(() => !!state.queued || !!state.endRequested || lease.lost, idleLeft);
  }
}

/**
 * An idle session (no task) keeps its browser for idleDiscardMs after its last activity,
 * then lets it go (its state sealed, as a hibernation) until its next task or a takeover.
 */
async function idleWait(session: Session, idleLeft: number): Promise<void> {
  const { input, state, lease } = session;
  const wakes = () => !!state.queued || !!state.endRequested || lease.lost;
  if (state.hibernated) {
    await wf.condition(() => wakes() || state.manual, idleLeft);
    if (state.manual && !state.endRequested) await wakeUp(session);
    return;
  }
  const discardLeft = state.lastActivityAt + (input.idleDiscardMs ?? 0) - Date.now();
  if (discardLeft > 0 || state.manual) {
    await wf.condition(wakes, state.manual ? idleLeft : Math.min(idleLeft, discardLeft));
    return;
  }
  if (!(await hibernate(session))) await wf.condition(wakes, idleLeft);
}

/** A hibernated session gets its browser back; when no worker can, it ends (instance lost). */
async function wakeUp(session: Session): Promise<boolean> {
  try {
    await wake(session);
    return true;
  } catch (err) {
    wf.log.warn('the session could not wake', { error: String(err) });
    session.state.requestEnd('instance_lost');
    return false;
  }
}

/** No worker could open a browser: the session fails at once. */
async function failToStart({ input, state }: Session): Promise<SessionView> {
  state.fail({ code: 'NO_INSTANCES_AVAILABLE', message: 'No browser instance could open a browser' }, false);
  state.end('instance_lost', 'failed');
  await setStatus(state, 'failed');
  await records.endSession({ sessionId: state.sessionId, userId: input.userId, status: 'failed', reason: 'instance_lost', profile: input.profile });
  await wf.condition(wf.allHandlersFinished);
  return state.view();
}

/**
 * Continues as new once every handler finished, with the browser where it is, unless a task
 * came in, the session is ending or its worker was lost meanwhile.
 */
async function continueAsNewWhenQuiet({ input, state, lease }: Session): Promise<void> {
  await wf.condition(wf.allHandlersFinished);
  const worker = lease.worker;
  if (!worker || state.queued || state.endRequested || lease.lost) return;
  lease.release();
  await wf.continueAsNew<typeof sessionWorkflow>({
    ...input,
    initialTask: undefined,
    carried: { workerId: worker.workerId, taskQueue: worker.taskQueue, previousTasks: [...state.previousTasks], lastActivityAt: state.lastActivityAt },
  });
}

/** The session ends: the lease goes, the browser closes (unless its worker is lost), the record is closed. */
async function closeSession({ input, state, lease }: Session, reason: EndReason): Promise<SessionView> {
  const finalStatus: SessionStatus =
    reason === 'expired' ? 'expired' : reason === 'instance_lost' ? 'failed' : reason === 'terminated' ? 'terminated' : 'completed';
  lease.release();
  if (reason !== 'instance_lost') {
    try {
      await lease.browser().control.closeBrowser({ sessionId: state.sessionId, profile: input.profile });
    } catch (err) {
      wf.log.warn('closing the browser failed', { error: String(err) });
    }
  }
  state.end(reason, finalStatus);
  wf.upsertSearchAttributes([{ key: SessionStatusKey, value: finalStatus }]);
  await records.endSession({ sessionId: state.sessionId, userId: input.userId, status: finalStatus, reason, profile: input.profile });
  await wf.condition(wf.allHandlersFinished);
  return state.view();
}
