/**
 * One durable workflow per browser session. Messages from the API arrive as updates,
 * the agent works through activities pinned to the worker that holds the browser, and
 * the state lives in a plain SessionState object. Deterministic: no I/O, no Node.
 */
import * as wf from '@temporalio/workflow';
import { Mutex } from 'async-mutex';
import {
  awaitReadyUpdate,
  awaitTaskUpdate,
  guardrailUpdate,
  interactionUpdate,
  newTaskUpdate,
  sessionQuery,
  stateUpdate,
  taskQuery,
} from './messages';
import { SessionStatusKey } from './search-attributes';
import { publishControl, publishUpdate, records as shared, setStatus as setStatusOf } from './session-records';
import { openSession } from './session-parts';
import { runTask } from './task-loop';
import type { EndReason, SessionInput, SessionStatus, SessionView } from '../contracts/session-types';

export async function sessionWorkflow(input: SessionInput): Promise<SessionView> {
  const session = openSession(input);
  const { state, lease, step } = session;
  const sessionId = input.sessionId;
  // Handlers that wait on activities (interactions, confirmations) run one at a time, in
  // the order they arrived: two clicks never overtake each other, and a click never runs
  // while the takeover before it still waits for the agent's step to stop.
  const handlerLock = new Mutex();

  const update = (message: string) => publishUpdate(state, message);
  const controlChanged = (message: string) => publishControl(state, message);

  // ---- messages ----------------------------------------------------------------------
  wf.setHandler(sessionQuery, () => state.view());
  wf.setHandler(taskQuery, (taskId) => state.taskView(taskId, Date.now()));
  wf.setHandler(awaitReadyUpdate, async () => {
    await wf.condition(() => state.status !== 'pending');
    return state.view();
  });
  wf.setHandler(
    newTaskUpdate,
    ({ taskId, params }) => {
      state.enqueueTask(taskId, params, Date.now());
      return { taskId };
    },
    { validator: (_task) => state.assertCanStartTask() },
  );
  wf.setHandler(awaitTaskUpdate, async ({ taskId, timeoutMs }) => {
    await wf.condition(() => state.isTaskSettled(taskId) || state.ended, timeoutMs);
    return state.isTaskSettled(taskId) ? state.taskView(taskId, Date.now()) : null;
  });
  wf.setHandler(
    stateUpdate,
    async ({ newState }) => {
      const confirmation = state.applyStateChange(newState, Date.now());
      if (newState !== 'resume') step.cancel();
      if (newState === 'pause' || newState === 'resume') await handlerLock.runExclusive(() => update(confirmation));
      return confirmation;
    },
    { validator: ({ newState }) => state.assertStateChange(newState) },
  );
  wf.setHandler(guardrailUpdate, ({ prompt }) => state.answerGuardrail(prompt, Date.now()), {
    validator: (_answer) => state.assertGuardrailAnswer(),
  });
  wf.setHandler(
    interactionUpdate,
    ({ action }) => handlerLock.runExclusive(async () => {
      if (action.type === 'releaseControl') {
        const text = state.release(Date.now()) ? 'Control returned to the agent; the task resumes' : 'Control returned to the agent';
        await controlChanged(text);
        return text;
      }
      if (!state.manual) {
        const text = state.takeOver(Date.now()) ? 'Manual control taken; the agent is paused' : 'Manual control taken';
        step.cancel();
        await wf.condition(() => !step.running);
        await controlChanged(text);
        if (action.type === 'takeOverControl') return text;
      } else if (action.type === 'takeOverControl') {
        return 'Manual control is already taken';
      }
      state.touch(Date.now());
      await lease.browser().control.interact({ sessionId, action, taskId: state.current?.taskId, userId: input.userId });
      return `${action.type} performed`;
    }),
    { validator: (_action) => state.assertInteraction() },
  );

  const setStatus = (status: SessionStatus) => setStatusOf(state, status);

  if (input.carried) {
    state.setStatus('active');
    lease.carryOver(input.carried);
  } else if (await lease.acquire(false, [], Date.now())) {
    await setStatus('active');
  } else {
    state.fail({ code: 'NO_INSTANCES_AVAILABLE', message: 'No browser instance could open a browser' }, false);
    state.end('instance_lost', 'failed');
    await setStatus('failed');
    await shared.endSession({ sessionId, userId: input.userId, status: 'failed', reason: 'instance_lost', profile: input.profile });
    await wf.condition(wf.allHandlersFinished);
    return state.view();
  }
  if (input.initialTask) state.enqueueTask(input.initialTask.taskId, input.initialTask.params, Date.now());

  // ---- the session's life ------------------------------------------------------------
  for (;;) {
    if (lease.lost && !state.endRequested) await lease.recover();
    if (state.endRequested) break;
    if (state.queued) {
      await runTask(session);
      continue;
    }
    if (wf.workflowInfo().continueAsNewSuggested) {
      await wf.condition(wf.allHandlersFinished);
      const worker = lease.worker;
      if (worker && !state.queued && !state.endRequested && !lease.lost) {
        lease.release();
        await wf.continueAsNew<typeof sessionWorkflow>({
          ...input,
          initialTask: undefined,
          carried: { workerId: worker.workerId, taskQueue: worker.taskQueue, previousTasks: [...state.previousTasks], lastActivityAt: state.lastActivityAt },
        });
      }
      continue;
    }
    const idleLeft = state.lastActivityAt + input.idleTimeoutMs - Date.now();
    if (idleLeft <= 0) {
      state.requestEnd('expired');
      break;
    }
    await wf.condition(() => !!state.queued || !!state.endRequested || lease.lost, idleLeft);
  }

  // ---- end ---------------------------------------------------------------------------
  const reason: EndReason = state.endRequested!;
  const finalStatus: SessionStatus =
    reason === 'expired' ? 'expired' : reason === 'instance_lost' ? 'failed' : reason === 'terminated' ? 'terminated' : 'completed';
  lease.release();
  if (reason !== 'instance_lost') {
    try {
      await lease.browser().control.closeBrowser({ sessionId, profile: input.profile });
    } catch (err) {
      wf.log.warn('closing the browser failed', { error: String(err) });
    }
  }
  state.end(reason, finalStatus);
  wf.upsertSearchAttributes([{ key: SessionStatusKey, value: finalStatus }]);
  await shared.endSession({ sessionId, userId: input.userId, status: finalStatus, reason, profile: input.profile });
  await wf.condition(wf.allHandlersFinished);
  return state.view();
}
