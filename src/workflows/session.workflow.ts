/**
 * One durable workflow per browser session. Messages from the API arrive as updates,
 * the agent works through activities pinned to the worker that holds the browser, and
 * the state lives in a plain SessionState object. Deterministic: no I/O, no Node.
 */
import * as wf from '@temporalio/workflow';
import type { SessionActivities } from '../activities/session.activities';
import type { BrowserActivities } from '../activities/browser.activities';
import {
  awaitReadyUpdate,
  awaitTaskUpdate,
  guardrailUpdate,
  newTaskUpdate,
  sessionQuery,
  stateUpdate,
  taskQuery,
} from './messages';
import { SessionState, toTaskView, type TaskState } from './session-state';
import { SessionStatusKey } from './search-attributes';
import type { EndReason, SessionInput, SessionStatus, SessionView } from './types';


const shared = wf.proxyActivities<SessionActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 20 },
});

/** Activities on the worker that holds this session's browser. A dead worker shows as a timeout. */
function browserOn(taskQueue: string) {
  const control = wf.proxyActivities<BrowserActivities>({
    taskQueue,
    scheduleToStartTimeout: '15s',
    startToCloseTimeout: '60s',
    retry: { maximumAttempts: 1 },
  });
  const agent = wf.proxyActivities<BrowserActivities>({
    taskQueue,
    scheduleToStartTimeout: '15s',
    startToCloseTimeout: '10m',
    heartbeatTimeout: '10s',
    retry: { maximumAttempts: 1 },
    cancellationType: wf.ActivityCancellationType.TRY_CANCEL,
  });
  return { control, agent };
}

const MAX_ASSIGN_ATTEMPTS = 3;

export async function sessionWorkflow(input: SessionInput): Promise<SessionView> {
  const state = new SessionState(input.sessionId, Date.now(), input.carried);
  let stepScope: wf.CancellationScope | undefined;

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
    ({ newState }) => {
      const confirmation = state.applyStateChange(newState, Date.now());
      if (newState !== 'resume') stepScope?.cancel();
      return confirmation;
    },
    { validator: ({ newState }) => state.assertStateChange(newState) },
  );
  wf.setHandler(guardrailUpdate, ({ prompt }) => state.answerGuardrail(prompt, Date.now()), {
    validator: (_answer) => state.assertGuardrailAnswer(),
  });

  const setStatus = async (status: SessionStatus) => {
    state.status = status;
    wf.upsertSearchAttributes([{ key: SessionStatusKey, value: status }]);
    await shared.markSession({ sessionId: input.sessionId, status, workerId: state.workerId });
  };

  // ---- acquire a browser -------------------------------------------------------------
  if (input.carried) {
    state.workerId = input.carried.workerId;
    state.taskQueue = input.carried.taskQueue;
    state.status = 'active';
  } else {
    const tried: string[] = [];
    for (let attempt = 0; attempt < MAX_ASSIGN_ATTEMPTS && !state.taskQueue; attempt++) {
      const assigned = await shared.assignWorker({ sessionId: input.sessionId, exclude: tried });
      if (!assigned) break;
      tried.push(assigned.workerId);
      try {
        await browserOn(assigned.taskQueue).control.openBrowser({ sessionId: input.sessionId, userId: input.userId });
        state.workerId = assigned.workerId;
        state.taskQueue = assigned.taskQueue;
      } catch (err) {
        wf.log.warn('browser worker could not open a browser', { workerId: assigned.workerId, error: String(err) });
      }
    }
    if (!state.taskQueue) {
      state.error = { code: 'NO_INSTANCES_AVAILABLE', message: 'No browser instance could open a browser' };
      state.endReason = 'instance_lost';
      await setStatus('failed');
      await shared.endSession({ sessionId: input.sessionId, userId: input.userId, status: 'failed', reason: 'instance_lost' });
      await wf.condition(wf.allHandlersFinished);
      return state.view();
    }
    await setStatus('active');
  }
  if (input.initialTask) state.enqueueTask(input.initialTask.taskId, input.initialTask.params, Date.now());
  const browser = browserOn(state.taskQueue!);

  // ---- one task ----------------------------------------------------------------------
  const saveTask = (t: TaskState) => shared.saveTask({ userId: input.userId, task: toTaskView(input.sessionId, t, Date.now()) });

  async function runTask(task: TaskState): Promise<void> {
    state.beginTask(Date.now());
    await saveTask(task);
    const deadline = new wf.CancellationScope();
    void deadline
      .run(() => wf.sleep(task.params.maxDuration))
      .then(() => {
        task.endRequest ??= 'timeout';
        stepScope?.cancel();
      })
      .catch(() => undefined);

    try {
      for (;;) {
        await wf.condition(() => task.status === 'running' || task.endRequest !== undefined);
        if (task.endRequest) break;
        if (task.steps >= input.maxSteps) {
          state.finishTask(task, 'failed', Date.now(), { error: { code: 'MAX_STEPS_REACHED', message: `The task did not finish within ${input.maxSteps} steps` } });
          break;
        }
        const humanReply = task.humanReply;
        task.humanReply = undefined;
        stepScope = new wf.CancellationScope();
        let result;
        try {
          result = await stepScope.run(() =>
            browser.agent.agentStep({
              sessionId: input.sessionId,
              userId: input.userId,
              taskId: task.taskId,
              stepNo: task.steps,
              params: task.params,
              previousTasks: state.previousTasks,
              humanReply,
              remaining: {
                inputTokens: task.params.maxInputTokens - task.inputTokens,
                outputTokens: task.params.maxOutputTokens - task.outputTokens,
              },
            }),
          );
        } catch (err) {
          if (wf.isCancellation(err)) {
            if (humanReply !== undefined && task.humanReply === undefined) task.humanReply = humanReply;
            continue; // paused, stopped, timed out or terminated: the loop head decides
          }
          throw err;
        } finally {
          stepScope = undefined;
        }
        state.recordStep(task, result);
        if (result.kind === 'done') {
          state.finishTask(task, result.success === false ? 'failed' : 'task_completed', Date.now(), {
            message: result.message,
            error: result.success === false ? { code: 'TASK_FAILED', message: result.message ?? 'The agent could not complete the task' } : undefined,
          });
          break;
        }
        if (result.kind === 'human_input' && result.humanInput) {
          task.status = 'guardrail_trigger';
          task.guardrail = result.humanInput;
          await saveTask(task);
        }
      }
    } catch (err) {
      const failure = describeFailure(err);
      state.finishTask(task, 'failed', Date.now(), { error: failure });
      if (failure.code === 'INSTANCE_LOST') state.endRequested = 'instance_lost';
    } finally {
      deadline.cancel();
    }

    if (task.endRequest && !task.completedAt) {
      if (task.endRequest === 'timeout') {
        const ms = task.params.maxDuration;
        state.finishTask(task, 'failed', Date.now(), { error: { code: 'TASK_TIMEOUT', message: `Task exceeded maxDuration of ${ms} ms`, details: { maxDuration: ms } } });
      } else {
        state.finishTask(task, 'stopped', Date.now());
      }
    }
    await shared.completeTask({ userId: input.userId, task: toTaskView(input.sessionId, task, Date.now()) });
    if (task.params.terminateOnCompletion && !state.endRequested) state.endRequested = 'terminateOnCompletion';
  }

  // ---- the session's life ------------------------------------------------------------
  for (;;) {
    if (state.endRequested) break;
    if (state.queued) {
      await runTask(state.queued);
      continue;
    }
    if (wf.workflowInfo().continueAsNewSuggested) {
      await wf.condition(wf.allHandlersFinished);
      if (!state.queued && !state.endRequested) {
        await wf.continueAsNew<typeof sessionWorkflow>({
          ...input,
          initialTask: undefined,
          carried: { workerId: state.workerId!, taskQueue: state.taskQueue!, previousTasks: state.previousTasks, lastActivityAt: state.lastActivityAt },
        });
      }
      continue;
    }
    const idleLeft = state.lastActivityAt + input.idleTimeoutMs - Date.now();
    if (idleLeft <= 0) {
      state.endRequested = 'expired';
      break;
    }
    await wf.condition(() => !!state.queued || !!state.endRequested, idleLeft);
  }

  // ---- end ---------------------------------------------------------------------------
  const reason: EndReason = state.endRequested!;
  const finalStatus: SessionStatus =
    reason === 'expired' ? 'expired' : reason === 'instance_lost' ? 'failed' : reason === 'terminated' ? 'terminated' : 'completed';
  if (reason !== 'instance_lost') {
    try {
      await browser.control.closeBrowser({ sessionId: input.sessionId });
    } catch (err) {
      wf.log.warn('closing the browser failed', { error: String(err) });
    }
  }
  state.endReason = reason;
  state.status = finalStatus;
  wf.upsertSearchAttributes([{ key: SessionStatusKey, value: finalStatus }]);
  await shared.endSession({ sessionId: input.sessionId, userId: input.userId, status: finalStatus, reason });
  await wf.condition(wf.allHandlersFinished);
  return state.view();
}

function describeFailure(err: unknown): { code: string; message: string; details?: Record<string, unknown> } {
  if (err instanceof wf.ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof wf.ApplicationFailure) {
      const details = (cause.details?.[0] as Record<string, unknown> | undefined) ?? undefined;
      return { code: cause.type ?? 'TASK_FAILED', message: cause.message, details };
    }
    if (cause instanceof wf.TimeoutFailure) {
      return { code: 'INSTANCE_LOST', message: 'The browser instance stopped responding' };
    }
    return { code: 'TASK_FAILED', message: cause?.message ?? err.message };
  }
  return { code: 'TASK_FAILED', message: err instanceof Error ? err.message : String(err) };
}
