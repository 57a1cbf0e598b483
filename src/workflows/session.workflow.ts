/**
 * One durable workflow per browser session. Messages from the API arrive as updates,
 * the agent works through activities pinned to the worker that holds the browser, and
 * the state lives in a plain SessionState object. Deterministic: no I/O, no Node.
 */
import * as wf from '@temporalio/workflow';
import { Mutex } from 'async-mutex';
import type { Placement, SessionActivities } from '../activities/session.activities';
import type { BrowserActivities } from '../activities/browser.activities';
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
import { deliverTaskWebhook, reachOutInChat } from './webhook-delivery.workflow';
import { applicationFailureOf, cancelledStep, describeFailure, detailsOf, failureType, isWorkerLoss, lostInstance } from './failures';
import type { EndReason, SessionInput, SessionStatus, SessionView, StepResult, TaskParams } from '../contracts/session-types';

const shared = wf.proxyActivities<SessionActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 20 },
});
/**
 * Picking a browser worker is one read of the registry: run beside the workflow (a local
 * activity), it saves a round trip through the server on the way to a session's first page.
 */
const local = wf.proxyLocalActivities<SessionActivities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 10 },
});
/** Sessions started before worker picks ran as local activities replay the way they ran. */
const assignWorker = (args: Parameters<SessionActivities['assignWorker']>[0]) => (wf.patched('assign-worker-locally') ? local.assignWorker(args) : shared.assignWorker(args));
/**
 * Picks the worker and, when the pick is the process running this workflow task and the
 * session is plain, opens the browser there and then (see placeSession). Sessions started
 * before that replay their separate pick and open.
 */
const place = async (args: Parameters<SessionActivities['placeSession']>[0]): Promise<Placement | null> =>
  wf.patched('open-browser-in-place') ? local.placeSession(args) : assignWorker({ sessionId: args.sessionId, exclude: args.exclude });

/** Activities on the worker that holds this session's browser. A dead worker shows as a timeout. */
function browserOn(taskQueue: string) {
  const once = { taskQueue, scheduleToStartTimeout: '15s', retry: { maximumAttempts: 1 } } as const;
  return {
    control: wf.proxyActivities<BrowserActivities>({ ...once, startToCloseTimeout: '60s' }),
    // A cancelled step is waited for, so a human taking over never races the agent's last action.
    agent: wf.proxyActivities<BrowserActivities>({
      ...once,
      startToCloseTimeout: '10m',
      heartbeatTimeout: '10s',
      cancellationType: wf.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    }),
    lease: wf.proxyActivities<BrowserActivities>({
      ...once,
      startToCloseTimeout: '30d',
      // Long enough for a worker busy with many sessions at once: at 4 s, 10 of 20 sessions
      // starting tasks together were taken for lost while their worker was alive.
      heartbeatTimeout: '12s',
      cancellationType: wf.ActivityCancellationType.TRY_CANCEL,
    }),
  };
}

const MAX_ASSIGN_ATTEMPTS = 3;
/** How long a worker whose lease timed out has to answer before its session is restored elsewhere. */
const RECLAIM_WAIT = '5s';
const RESTORE_RETRY_MS = 2000;

export async function sessionWorkflow(input: SessionInput): Promise<SessionView> {
  const state = new SessionState(input.sessionId, Date.now(), input.carried);
  const sessionId = input.sessionId;
  let stepScope: wf.CancellationScope | undefined;
  let leaseScope: wf.CancellationScope | undefined;
  let instanceLost = false;
  // Handlers that wait on activities (interactions, confirmations) run one at a time, in
  // the order they arrived: two clicks never overtake each other, and a click never runs
  // while the takeover before it still waits for the agent's step to stop.
  const handlerLock = new Mutex();

  const publish = (message: Parameters<SessionActivities['publish']>[0]['message']) => shared.publish({ sessionId, message });
  const update = (message: string) => publish({ type: 'response_update', taskId: state.current?.taskId, data: { message } });
  /** Who holds the browser changed: watchers (the live view page) learn it from `data.control`. */
  const controlChanged = (message: string) => publish({ type: 'response_update', taskId: state.current?.taskId, data: { message, control: state.manual ? 'manual' : 'agent' } });

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
      await browserOn(state.taskQueue!).control.interact({ sessionId, action, taskId: state.current?.taskId, userId: input.userId });
      return `${action.type} performed`;
    }),
    { validator: (_action) => state.assertInteraction() },
  );

  const setStatus = async (status: SessionStatus) => {
    state.setStatus(status);
    wf.upsertSearchAttributes([{ key: SessionStatusKey, value: status }]);
    await shared.markSession({ sessionId, status, workerId: state.workerId });
  };

  // ---- the browser and its worker ----------------------------------------------------
  /** Keeps a heartbeating activity on the browser's worker; its failure means the worker is gone. */
  const holdLease = () => {
    leaseScope?.cancel();
    const scope = new wf.CancellationScope();
    leaseScope = scope;
    const queue = state.taskQueue!;
    scope
      .run(() => browserOn(queue).lease.holdBrowser({ sessionId }))
      .then(
        () => undefined,
        (err) => {
          if (wf.isCancellation(err) || leaseScope !== scope) return;
          wf.log.warn('browser worker lost', { workerId: state.workerId, error: String(err) });
          instanceLost = true;
          stepScope?.cancel();
        },
      );
  };

  /** Finds a worker that opens the browser (restoring page and storage if asked), until the deadline. */
  const acquire = async (restore: boolean, exclude: string[], deadline: number): Promise<boolean> => {
    const tried = [...exclude];
    for (let attempt = 0; ; attempt++) {
      const plain = !restore && !input.profile && !input.proxy;
      const assigned = await place({ sessionId, exclude: tried, ...(plain ? { open: { userId: input.userId } } : {}) });
      if (assigned) {
        tried.push(assigned.workerId);
        try {
          if (!assigned.opened) await browserOn(assigned.taskQueue).control.openBrowser({ sessionId, userId: input.userId, restore, profile: input.profile, proxy: input.proxy });
          state.placeOn(assigned.workerId, assigned.taskQueue);
          holdLease();
          return true;
        } catch (err) {
          wf.log.warn('browser worker could not open a browser', { workerId: assigned.workerId, error: String(err) });
          // The session's proxy refused or is unreachable: another worker would not do better.
          const refused = applicationFailureOf(err);
          if (refused?.type === 'PROXY_CONNECTION_FAILED') {
            state.fail({ code: refused.type, message: refused.message, details: detailsOf(refused) });
            return false;
          }
        }
      }
      if (!restore) {
        if (!assigned || attempt + 1 >= MAX_ASSIGN_ATTEMPTS) return false;
        continue;
      }
      if (Date.now() + RESTORE_RETRY_MS > deadline) return false;
      await wf.sleep(RESTORE_RETRY_MS);
      if (!assigned) tried.splice(exclude.length); // workers that failed once may take it now
    }
  };

  /** The worker that held the browser takes the session again, if it answers within a few seconds. */
  const reclaim = async (workerId: string, taskQueue: string): Promise<boolean> => {
    try {
      await wf
        .proxyActivities<BrowserActivities>({ taskQueue, scheduleToStartTimeout: RECLAIM_WAIT, startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } })
        .openBrowser({ sessionId, userId: input.userId, restore: true, profile: input.profile, proxy: input.proxy });
    } catch (err) {
      wf.log.warn('the browser worker did not answer; the session is restored elsewhere', { workerId, error: String(err) });
      return false;
    }
    state.placeOn(workerId, taskQueue);
    holdLease();
    return true;
  };

  /** The worker died: the session is orphaned and comes back on another worker within the grace period. */
  const recover = async (): Promise<boolean> => {
    const lost = state.workerId!;
    await setStatus('orphaned');
    await shared.publishConnection({ sessionId, event: { event: 'instance:disconnected', reason: 'The browser instance stopped responding' } });
    // A worker that only missed its heartbeats (stalled under load, paused) still holds the
    // browser: it is asked first, briefly, and keeps the session as it is. A dead one costs
    // the short wait before the restore elsewhere. Sessions recovered before this replay as they ran.
    const restored = (wf.patched('recover-on-live-worker') && (await reclaim(lost, state.taskQueue!))) || (await acquire(true, [lost], Date.now() + input.orphanGraceMs));
    if (!restored) {
      state.requestEnd('instance_lost');
      return false;
    }
    instanceLost = false;
    await setStatus('active');
    await shared.publishConnection({ sessionId, event: { event: 'instance:reconnected', workerId: state.workerId } });
    return true;
  };

  if (input.carried) {
    state.placeOn(input.carried.workerId, input.carried.taskQueue);
    state.setStatus('active');
    holdLease();
  } else if (await acquire(false, [], Date.now())) {
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
        await wf.condition(() => (task.status === 'running' && !state.manual) || task.endRequest !== undefined || instanceLost);
        if (instanceLost && !(await recover())) throw lostInstance();
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
            browserOn(state.taskQueue!).agent.agentStep({
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
          if (isWorkerLoss(err)) instanceLost = true;
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
    if (!instanceLost && !artifactsCollected) {
      try {
        await browserOn(state.taskQueue!).control.collectArtifacts({ sessionId, taskId: task.taskId });
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
    if (instanceLost && !state.endRequested) await recover();
    if (state.endRequested) break;
    if (state.queued) {
      await runTask();
      continue;
    }
    if (wf.workflowInfo().continueAsNewSuggested) {
      await wf.condition(wf.allHandlersFinished);
      if (!state.queued && !state.endRequested && !instanceLost) {
        leaseScope?.cancel();
        await wf.continueAsNew<typeof sessionWorkflow>({
          ...input,
          initialTask: undefined,
          carried: { workerId: state.workerId!, taskQueue: state.taskQueue!, previousTasks: [...state.previousTasks], lastActivityAt: state.lastActivityAt },
        });
      }
      continue;
    }
    const idleLeft = state.lastActivityAt + input.idleTimeoutMs - Date.now();
    if (idleLeft <= 0) {
      state.requestEnd('expired');
      break;
    }
    await wf.condition(() => !!state.queued || !!state.endRequested || instanceLost, idleLeft);
  }

  // ---- end ---------------------------------------------------------------------------
  const reason: EndReason = state.endRequested!;
  const finalStatus: SessionStatus =
    reason === 'expired' ? 'expired' : reason === 'instance_lost' ? 'failed' : reason === 'terminated' ? 'terminated' : 'completed';
  leaseScope?.cancel();
  leaseScope = undefined;
  if (reason !== 'instance_lost') {
    try {
      await browserOn(state.taskQueue!).control.closeBrowser({ sessionId, profile: input.profile });
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
