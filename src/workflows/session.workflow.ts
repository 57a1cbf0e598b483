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
import { SessionState, toTaskView, type TaskState } from './session-state';
import { SessionStatusKey } from './search-attributes';
import { BrowserLease } from './browser-lease';
import { publish as publishTo, publishControl, publishUpdate, records as shared, setStatus as setStatusOf, type SessionMessage } from './session-records';
import { deliverTaskWebhook, reachOutInChat } from './webhook-delivery.workflow';
import { cancelledStep, describeFailure, failureType, isWorkerLoss, lostInstance } from './failures';
import type { EndReason, SessionInput, SessionStatus, SessionView, StepResult, TaskParams } from '../contracts/session-types';

export async function sessionWorkflow(input: SessionInput): Promise<SessionView> {
  const state = new SessionState(input.sessionId, Date.now(), input.carried);
  const sessionId = input.sessionId;
  let stepScope: wf.CancellationScope | undefined;
  const lease = new BrowserLease(input, state, () => stepScope?.cancel());
  // Handlers that wait on activities (interactions, confirmations) run one at a time, in
  // the order they arrived: two clicks never overtake each other, and a click never runs
  // while the takeover before it still waits for the agent's step to stop.
  const handlerLock = new Mutex();

  const publish = (message: SessionMessage) => publishTo(state, message);
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
      if (newState !== 'resume') stepScope?.cancel();
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
        stepScope?.cancel();
        await wf.condition(() => stepScope === undefined);
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

  // ---- one task ----------------------------------------------------------------------
  const saveTask = (t: Readonly<TaskState>) => shared.saveTask({ userId: input.userId, task: toTaskView(sessionId, t, Date.now()) });

  async function runTask(): Promise<void> {
    let artifactsCollected = false;
    const task = state.beginTask(Date.now());
    await saveTask(task);
    await publish({ type: 'response_update', taskId: task.taskId, data: { message: 'Task started' } });
    const deadline = new wf.CancellationScope();
    deadline
      .run(() => wf.sleep(task.params.maxDuration))
      .then(
        () => {
          state.requestTimeout(task);
          stepScope?.cancel();
        },
        () => undefined,
      );

    try {
      for (;;) {
        await wf.condition(() => (task.status === 'running' && !state.manual) || task.endRequest !== undefined || lease.lost);
        if (lease.lost && !(await lease.recover())) throw lostInstance();
        if (task.endRequest) break;
        if (task.status !== 'running' || state.manual) continue;
        if (task.steps >= input.maxSteps) {
          state.finishTask(task, 'failed', Date.now(), { error: { code: 'MAX_STEPS_REACHED', message: `The task did not finish within ${input.maxSteps} steps` } });
          break;
        }
        const humanReply = state.takeHumanReply(task);
        // The prompt, the parameters and the previous tasks go to a worker once per task, and
        // so do secret values; again only when the session moved (the history stays small).
        const hasSecrets = !!task.params.secrets?.length;
        const handOverSecrets = state.handOverSecrets(task);
        const handOverContext = state.handOverContext(task);
        const scope = new wf.CancellationScope();
        stepScope = scope;
        let result: StepResult & { cost: number };
        try {
          result = await scope.run(() =>
            lease.browser().agent.agentStep({
              sessionId,
              userId: input.userId,
              taskId: task.taskId,
              stepNo: task.steps,
              context: handOverContext ? { params: withoutSecrets(task.params), previousTasks: [...state.previousTasks] } : undefined,
              humanReply,
              environmentId: input.profile?.kind === 'environment' ? input.profile.id : undefined,
              remaining: {
                inputTokens: task.params.maxInputTokens - task.inputTokens,
                outputTokens: task.params.maxOutputTokens - task.outputTokens,
              },
              policyId: input.policyId,
              hasSecrets,
              secrets: handOverSecrets ? task.params.secrets : undefined,
            }),
          );
        } catch (err) {
          // The answer was not used: hand it to the next attempt.
          state.returnHumanReply(task, humanReply);
          if (isWorkerLoss(err)) lease.markLost();
          const spent = cancelledStep(err);
          if (spent) state.recordCancelledStep(task, spent);
          if (wf.isCancellation(err) || isWorkerLoss(err)) continue; // the loop head decides
          // The worker lost them (restarted under the same id): hand them over again.
          if (failureType(err) === 'SECRETS_UNAVAILABLE' && state.secretsLost(task)) continue;
          if (failureType(err) === 'TASK_CONTEXT_UNAVAILABLE' && state.contextLost(task)) continue;
          throw err;
        } finally {
          if (stepScope === scope) stepScope = undefined;
        }
        state.recordStep(task, result);
        if (result.kind === 'done') {
          artifactsCollected = result.artifactsCollected === true;
          state.finishTask(task, result.success === false ? 'failed' : 'task_completed', Date.now(), {
            message: result.message,
            error: result.success === false ? { code: 'TASK_FAILED', message: result.message ?? 'The agent could not complete the task' } : undefined,
          });
          break;
        }
        if (result.kind === 'human_input' && result.humanInput) {
          state.awaitHuman(task, result.humanInput);
          await saveTask(task);
          await publish({ type: 'guardrail_trigger', taskId: task.taskId, data: result.humanInput });
          // reachOut is absent from sessions started before it existed: their replay takes no new branch.
          if (input.reachOut) await reachOutInChat({ userId: input.userId, sessionId, taskId: task.taskId, environmentId: input.reachOut.environmentId, what: 'guardrail', step: task.steps });
        }
      }
    } catch (err) {
      state.finishTask(task, 'failed', Date.now(), { error: describeFailure(err) });
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
    if (!lease.lost && !artifactsCollected) {
      try {
        await lease.browser().control.collectArtifacts({ sessionId, taskId: task.taskId });
      } catch (err) {
        wf.log.warn('downloads and requests of the task were not collected', { error: String(err) });
      }
    }
    // Waiters get the outcome now; the record, the charge and the event follow at once.
    state.markRecorded(task);
    await shared.completeTask({ userId: input.userId, task: toTaskView(sessionId, task, Date.now()) });
    if (task.params.webhook && wf.patched('task-webhook')) await deliverTaskWebhook({ userId: input.userId, sessionId, taskId: task.taskId, webhook: task.params.webhook });
    if (input.reachOut?.mode === 'full') await reachOutInChat({ userId: input.userId, sessionId, taskId: task.taskId, environmentId: input.reachOut.environmentId, what: 'result', step: task.steps });
    if (task.params.terminateOnCompletion) state.requestEnd(input.singleTask ? 'completed' : 'terminateOnCompletion');
  }

  // ---- the session's life ------------------------------------------------------------
  for (;;) {
    if (lease.lost && !state.endRequested) await lease.recover();
    if (state.endRequested) break;
    if (state.queued) {
      await runTask();
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

/** Task parameters as every step gets them: the secret values travel apart (see handOver). */
function withoutSecrets(params: TaskParams): TaskParams {
  const { secrets: _values, ...rest } = params;
  return rest;
}
