/**
 * One task of a session: the queued task starts, the agent takes steps (one activity each,
 * on the worker holding the browser) until it is done, asks a human, is stopped, runs out of
 * time or steps, or its worker is lost for good; then its end is recorded. Deterministic: no
 * I/O, no Node.
 *
 * runTask keeps every wait of the task in one function, in the order the histories of running
 * sessions hold them: moving a wait into a function of its own would let a message handled
 * in the same workflow task issue its command first, and such a history would no longer replay.
 * The steps between the waits are the small functions below it.
 */
import * as wf from '@temporalio/workflow';
import { cancelledStep, describeFailure, failureType, isWorkerLoss, lostInstance, type FailureDescription } from './failures';
import { hibernate, wake } from './hibernation';
import { publish, records } from './session-records';
import { stoppedMessage, toTaskView, type SessionState, type TaskState } from './session-state';
import type { Session } from './session-parts';
import type { StepRequest, StepResult, TaskParams } from '../contracts/session-types';
import { deliverTaskWebhook, reachOutInChat } from './webhook-delivery.workflow';

type Task = Readonly<TaskState>;

export async function runTask(s: Session): Promise<void> {
  const { input, state, lease, step } = s;
  let artifactsCollected = false;
  const task = state.beginTask(Date.now());
  await saveTask(s, task);
  await publish(state, { type: 'response_update', taskId: task.taskId, data: { message: 'Task started' } });
  const deadline = new TimeLimit(s, task);
  try {
    for (;;) {
      await wf.condition(() => (task.status === 'running' && !state.manual) || task.endRequest !== undefined || lease.lost);
      if (lease.lost && !(await lease.recover())) throw lostInstance();
      if (task.endRequest) break;
      if (task.status !== 'running' || state.manual) continue;
      if (outOfSteps(s, task)) break;
      const { humanReply, request } = nextStep(s, task);
      const scope = step.open();
      let result: StepResult & { cost: number };
      try {
        result = await scope.run(() => lease.browser().agent.agentStep(request));
      } catch (err) {
        if (stepFailed(s, task, humanReply, err)) continue; // the loop head decides
        throw err;
      } finally {
        step.close(scope);
      }
      state.recordStep(task, result);
      if (result.kind === 'done') {
        artifactsCollected = finishDone(state, task, result);
        break;
      }
      if (result.kind === 'human_input' && result.humanInput) {
        state.awaitHuman(task, result.humanInput);
        await saveTask(s, task);
        await publish(state, { type: 'guardrail_trigger', taskId: task.taskId, data: result.humanInput });
        // reachOut is absent from sessions started before it existed: their replay takes no new branch.
        if (input.reachOut) await reachOutInChat({ userId: input.userId, sessionId: state.sessionId, taskId: task.taskId, environmentId: input.reachOut.environmentId, what: 'guardrail', step: task.steps });
        // Sessions started before hibernation replay their wait as it ran (the task's time limit on).
        if (input.hibernateAfterMs !== undefined && wf.patched('hibernate-human-waits')) await waitForHuman(s, task, deadline);
      }
    }
  } catch (err) {
    state.finishTask(task, 'failed', Date.now(), { error: withPartialMessage(task, describeFailure(err)) });
  } finally {
    deadline.cancel();
  }
  finishAsRequested(state, task);
  if (!lease.lost && !artifactsCollected) {
    try {
      await lease.browser().control.collectArtifacts({ sessionId: state.sessionId, taskId: task.taskId });
    } catch (err) {
      wf.log.warn('downloads and requests of the task were not collected', { error: String(err) });
    }
  }
  // Waiters get the outcome now; the record, the charge and the event follow at once.
  state.markRecorded(task);
  await records.completeTask({ userId: input.userId, task: toTaskView(state.sessionId, task, Date.now()) });
  if (task.params.webhook && wf.patched('task-webhook')) await deliverTaskWebhook({ userId: input.userId, sessionId: state.sessionId, taskId: task.taskId, webhook: task.params.webhook });
  if (input.reachOut?.mode === 'full') await reachOutInChat({ userId: input.userId, sessionId: state.sessionId, taskId: task.taskId, environmentId: input.reachOut.environmentId, what: 'result', step: task.steps });
  if (task.params.terminateOnCompletion) state.requestEnd(input.singleTask ? 'completed' : 'terminateOnCompletion');
}

function saveTask(s: Session, task: Task): Promise<void> {
  return records.saveTask({ userId: s.input.userId, task: toTaskView(s.state.sessionId, task, Date.now()) });
}

/**
 * The task's maxDuration: when it is over, the task is asked to end and its step is
 * cancelled. Time spent waiting for a person does not count (the clock is paused).
 */
class TimeLimit {
  #scope?: wf.CancellationScope;
  #left: number;
  #since = 0;

  constructor(
    private readonly s: Session,
    private readonly task: Task,
  ) {
    this.#left = task.params.maxDuration;
    this.#start();
  }

  #start(): void {
    const scope = new wf.CancellationScope();
    this.#scope = scope;
    this.#since = Date.now();
    scope
      .run(() => wf.sleep(this.#left))
      .then(
        () => {
          this.s.state.requestTimeout(this.task);
          this.s.step.cancel();
        },
        () => undefined,
      );
  }

  /** The clock stops (a wait for a person begins). */
  pause(): void {
    if (!this.#scope) return;
    this.#left = Math.max(1, this.#left - (Date.now() - this.#since));
    this.#scope.cancel();
    this.#scope = undefined;
  }

  /** The clock goes on with what was left. */
  resume(): void {
    if (!this.#scope && !this.task.completedAt) this.#start();
  }

  cancel(): void {
    this.#scope?.cancel();
    this.#scope = undefined;
  }
}

/**
 * A wait for a person (a guardrail, an approval): the task's clock stops; after
 * hibernateAfterMs without activity the session lets its browser go (hibernates) until an
 * answer or a takeover wakes it on any worker; after guardrailMaxWaitMs the session expires.
 */
async function waitForHuman(s: Session, task: Task, clock: TimeLimit): Promise<void> {
  const { input, state, lease } = s;
  const maxWait = input.guardrailMaxWaitMs ?? 86_400_000;
  const until = Date.now() + maxWait;
  const answered = () => task.status !== 'guardrail_trigger' || task.endRequest !== undefined || state.endRequested !== undefined;
  clock.pause();
  try {
    while (!answered() && !lease.lost) {
      const left = until - Date.now();
      if (left <= 0) {
        state.requestEnd('expired');
        throw wf.ApplicationFailure.create({ type: 'HUMAN_WAIT_EXPIRED', message: `Nobody answered within ${maxWait} ms (GUARDRAIL_MAX_WAIT_MS); the session expired`, details: [{ maxWaitMs: maxWait }], nonRetryable: true });
      }
      if (state.hibernated) {
        await wf.condition(() => answered() || state.manual, left);
        // (a session that ends is closed without its browser)
        if ((answered() || state.manual) && state.endRequested === undefined) await wake(s, task.taskId);
        continue;
      }
      if (state.manual) {
        await wf.condition(() => answered() || lease.lost || !state.manual, left);
        continue;
      }
      const idle = state.lastActivityAt + (input.hibernateAfterMs ?? 0) - Date.now();
      if (!input.hibernateAfterMs || idle > 0) {
        await wf.condition(() => answered() || lease.lost || state.manual, input.hibernateAfterMs ? Math.min(left, idle) : left);
        continue;
      }
      if (!(await hibernate(s, task.taskId))) await wf.condition(() => answered() || lease.lost || state.manual, left);
    }
    // Stopped while asleep: the session goes on with its browser (unless it is ending).
    if (state.hibernated && state.endRequested === undefined) await wake(s, task.taskId);
  } finally {
    clock.resume();
  }
}


/** Ends the task when it took all the steps it may take. */
function outOfSteps({ input, state }: Session, task: Task): boolean {
  if (task.steps < input.maxSteps) return false;
  state.finishTask(task, 'failed', Date.now(), { error: { code: 'MAX_STEPS_REACHED', message: `The task did not finish within ${input.maxSteps} steps` } });
  return true;
}

/**
 * The request of the next step. The prompt, the parameters and the previous tasks go to a
 * worker once per task, and so do secret values; again only when the session moved (the
 * history stays small).
 */
function nextStep({ input, state }: Session, task: Task): { humanReply?: string; request: StepRequest } {
  const humanReply = state.takeHumanReply(task);
  const hasSecrets = !!task.params.secrets?.length;
  const handOverSecrets = state.handOverSecrets(task);
  const handOverContext = state.handOverContext(task);
  const request: StepRequest = {
    sessionId: state.sessionId,
    userId: input.userId,
    taskId: task.taskId,
    stepNo: task.steps,
    context: handOverContext ? { params: withoutSecrets(task.params), previousTasks: [...state.previousTasks] } : undefined,
    humanReply,
    environmentId: input.profile?.kind === 'environment' ? input.profile.id : undefined,
    remaining: {
      inputTokens: task.params.maxInputTokens - task.inputTokens,
      outputTokens: task.params.maxOutputTokens - task.outputTokens,
      ...(task.params.maxCost !== undefined ? { cost: task.params.maxCost - task.cost } : {}),
    },
    spentCost: task.cost,
    policyId: input.policyId,
    hasSecrets,
    secrets: handOverSecrets ? task.params.secrets : undefined,
  };
  return { humanReply, request };
}

/**
 * A step that did not finish: its tokens count, and answers whether the loop goes on (a
 * cancellation, a lost worker, or secrets or context the worker lost and gets again).
 */
function stepFailed({ state, lease }: Session, task: Task, humanReply: string | undefined, err: unknown): boolean {
  // The answer was not used: hand it to the next attempt.
  state.returnHumanReply(task, humanReply);
  if (isWorkerLoss(err)) lease.markLost();
  const spent = cancelledStep(err);
  if (spent) state.recordCancelledStep(task, spent);
  if (wf.isCancellation(err) || isWorkerLoss(err)) return true;
  // The worker lost them (restarted under the same id): hand them over again.
  if (failureType(err) === 'SECRETS_UNAVAILABLE' && state.secretsLost(task)) return true;
  if (failureType(err) === 'TASK_CONTEXT_UNAVAILABLE' && state.contextLost(task)) return true;
  return false;
}

/** The agent said it is done; answers whether its last step already stored the task's downloads and requests. */
function finishDone(state: SessionState, task: Task, result: StepResult): boolean {
  state.finishTask(task, result.success === false ? 'failed' : 'task_completed', Date.now(), {
    message: result.message,
    verification: result.verification,
    error: result.success === false ? { code: 'TASK_FAILED', message: result.message ?? 'The agent could not complete the task' } : undefined,
  });
  return result.artifactsCollected === true;
}

/** A task asked to end (stop, terminate, its time limit) and not ended otherwise ends now. */
function finishAsRequested(state: SessionState, task: Task): void {
  if (!task.endRequest || task.completedAt) return;
  if (task.endRequest === 'timeout') {
    const ms = task.params.maxDuration;
    state.finishTask(task, 'failed', Date.now(), { error: { code: 'TASK_TIMEOUT', message: `Task exceeded maxDuration of ${ms} ms`, details: { maxDuration: ms } } });
  } else {
    state.finishTask(task, 'stopped', Date.now());
  }
}

/** Task parameters as every step gets them: the secret values travel apart (see nextStep). */
function withoutSecrets(params: TaskParams): TaskParams {
  const { secrets: _values, ...rest } = params;
  return rest;
}

/** A task ended by its budget answers, besides the usage so far, what the agent had found or said until then. */
function withPartialMessage(task: Task, error: FailureDescription): FailureDescription {
  if (error.code !== 'TASK_BUDGET_EXCEEDED') return error;
  return { ...error, details: { ...error.details, partialMessage: stoppedMessage(task) } };
}
