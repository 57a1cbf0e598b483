/**
 * The session's state machine as a plain class: no Temporal imports beyond errors, so it
 * can be unit-tested directly. The workflow drives it and performs the side effects.
 */
import { ApplicationFailure } from '@temporalio/common';
import type {
  EndReason,
  PreviousTask,
  SessionStatus,
  SessionView,
  StepResult,
  TaskParams,
  TaskStatus,
  TaskView,
  Usage,
  Verification,
} from '../contracts/session-types';
import { TERMINAL_TASK_STATUSES } from '../contracts/session-types';

export type EndRequest = 'stop' | 'terminate' | 'timeout';

export interface TaskState {
  taskId: string;
  params: TaskParams;
  status: TaskStatus;
  createdAt: number;
  startedAt?: number;
  completedAt?: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  /** Bytes relayed through a managed proxy, and their cost (part of `cost`). */
  proxyBytes?: number;
  proxyCost?: number;
  steps: number;
  /** Steps a replay performed from its recording, without the model. */
  replayedSteps?: number;
  message?: string;
  /** A task with `verify`: the verdicts its result passed. */
  verification?: Verification;
  /** The agent's words with its last step that had some, and its last action: a stopped task's message. */
  lastWords?: string;
  lastAction?: string;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  guardrail?: { type: string; value: string };
  endRequest?: EndRequest;
  /** Set when a guardrail is answered; handed to the agent at its next step. */
  humanReply?: string;
  /** The task's downloads and requests are stored: only then do waiters get the outcome. */
  recorded?: boolean;
  /** The worker that was handed the task's secret values. */
  secretsOn?: string;
  /** How often a worker asked for them again. */
  secretHandOvers?: number;
  /** The worker that holds the task's prompt, parameters and previous tasks (steps carry them only when it changes). */
  contextOn?: string;
  /** How often a worker asked for them again. */
  contextHandOvers?: number;
}

const KEEP_RECENT_TASKS = 20;
const KEEP_PREVIOUS_SUMMARIES = 10;
/** Characters of a previous task's prompt and result kept in its summary. */
const SUMMARY_CHARS = 2000;
/** How often a task's secrets or context are handed to a worker that lost them. */
const MAX_HAND_OVERS = 3;

export const reject = (code: string, message: string, details?: Record<string, unknown>): ApplicationFailure =>
  ApplicationFailure.create({ type: code, message, nonRetryable: true, details: details ? [details] : undefined });

/**
 * Changes only through its own methods: the workflow reads the fields (getters, read-only
 * task views) and calls a method for every change, so each rule lives here.
 */
export class SessionState {
  #status: SessionStatus = 'pending';
  /** The worker that holds the browser (the lease owns its task queue). */
  #workerId?: string;
  #endReason?: EndReason;
  #endRequested?: EndReason;
  #error?: { code: string; message: string; details?: Record<string, unknown> };
  #current?: TaskState;
  /** A human holds the browser (takeOverControl); the agent waits. */
  #manual = false;
  /** The session let its browser go while it waits for a person (hibernation), since then. */
  #hibernatedSince?: number;
  #pausedByTakeover = false;
  #queued?: TaskState;
  readonly #recent = new Map<string, TaskState>();
  #previousTasks: PreviousTask[];
  #lastActivityAt: number;

  constructor(
    readonly sessionId: string,
    now: number,
    carried?: { previousTasks: PreviousTask[]; lastActivityAt: number },
  ) {
    this.#previousTasks = carried?.previousTasks ?? [];
    this.#lastActivityAt = carried?.lastActivityAt ?? now;
  }

  get status(): SessionStatus {
    return this.#status;
  }
  get workerId(): string | undefined {
    return this.#workerId;
  }
  get endReason(): EndReason | undefined {
    return this.#endReason;
  }
  get endRequested(): EndReason | undefined {
    return this.#endRequested;
  }
  get error(): { code: string; message: string; details?: Record<string, unknown> } | undefined {
    return this.#error;
  }
  get current(): Readonly<TaskState> | undefined {
    return this.#current;
  }
  get queued(): Readonly<TaskState> | undefined {
    return this.#queued;
  }
  get hibernated(): boolean {
    return this.#hibernatedSince !== undefined;
  }

  get hibernatedSince(): number | undefined {
    return this.#hibernatedSince;
  }

  /** The browser was let go (true) or brought back (false). */
  setHibernated(hibernated: boolean, now: number): void {
    this.#hibernatedSince = hibernated ? now : undefined;
  }

  get manual(): boolean {
    return this.#manual;
  }
  get previousTasks(): readonly PreviousTask[] {
    return this.#previousTasks;
  }
  get lastActivityAt(): number {
    return this.#lastActivityAt;
  }

  // ---- the session -------------------------------------------------------------------

  setStatus(status: SessionStatus): void {
    this.#status = status;
  }

  /** The browser is open on this worker (first placement, a restore, or carried over by continue-as-new). */
  placeOn(workerId: string): void {
    this.#workerId = workerId;
  }

  /** Records why the session cannot go on; the first cause is kept unless `replace`. */
  fail(error: { code: string; message: string; details?: Record<string, unknown> }, replace = true): void {
    if (replace || !this.#error) this.#error = error;
  }

  /** Asks the session's loop to end (an idle timeout, a lost worker, a finished one-off task). */
  requestEnd(reason: EndReason): void {
    this.#endRequested ??= reason;
  }

  /** The session is over. */
  end(reason: EndReason, status: SessionStatus): void {
    this.#endReason = reason;
    this.#status = status;
  }

  get ended(): boolean {
    return this.#endReason !== undefined;
  }

  touch(now: number): void {
    this.#lastActivityAt = now;
  }

  view(): SessionView {
    return {
      sessionId: this.sessionId,
      status: this.#status,
      workerId: this.#workerId,
      currentTaskId: this.#current?.taskId ?? this.#queued?.taskId,
      endReason: this.#endReason,
      error: this.#error,
      manual: this.#manual,
      ...(this.#hibernatedSince !== undefined ? { hibernated: true } : {}),
    };
  }

  // ---- tasks -------------------------------------------------------------------------

  assertCanStartTask(): void {
    if (this.ended || this.#endRequested) throw reject('SESSION_NOT_FOUND', 'Session has ended');
    const busy = this.#queued ?? this.#current;
    if (busy) throw reject('TASK_ALREADY_RUNNING', 'A task is already running in this session', { taskId: busy.taskId });
  }

  /**
   * The session's first task, queued even when the session was asked to end while it got
   * its browser: then the task is queued asked to end too, so it ends `stopped` and is
   * recorded like any stopped task.
   */
  enqueueInitialTask(taskId: string, params: TaskParams, now: number): void {
    if (!this.#endRequested) return this.enqueueTask(taskId, params, now);
    const task: TaskState = { taskId, params, status: 'running', createdAt: now, inputTokens: 0, outputTokens: 0, cost: 0, steps: 0, endRequest: 'terminate' };
    this.#queued = task;
    this.remember(task);
  }

  enqueueTask(taskId: string, params: TaskParams, now: number): void {
    this.assertCanStartTask();
    const task: TaskState = { taskId, params, status: 'running', createdAt: now, inputTokens: 0, outputTokens: 0, cost: 0, steps: 0 };
    this.#queued = task;
    this.remember(task);
    this.touch(now);
  }

  /** Moves the queued task to current. */
  beginTask(now: number): Readonly<TaskState> {
    const task = this.#queued;
    if (!task) throw new Error('no queued task');
    this.#queued = undefined;
    this.#current = task;
    task.startedAt = now;
    return task;
  }

  recordStep(of: Readonly<TaskState>, result: StepResult & { cost?: number }): void {
    const task = this.#own(of);
    task.steps += 1;
    if (result.replayed) task.replayedSteps = (task.replayedSteps ?? 0) + 1;
    task.inputTokens += result.usage.inputTokens;
    task.outputTokens += result.usage.outputTokens;
    task.cost = round6(task.cost + (result.cost ?? 0));
    if (result.proxy) {
      task.proxyBytes = (task.proxyBytes ?? 0) + result.proxy.bytes;
      task.proxyCost = round6((task.proxyCost ?? 0) + result.proxy.cost);
    }
    if (result.message) task.message = result.message;
    if (result.said) task.lastWords = result.said;
    if (result.action) task.lastAction = result.action.target ? `${result.action.name} ${result.action.target}` : result.action.name;
  }

  /** A step cancelled halfway: its model tokens and their cost count all the same (the step itself does not). */
  recordCancelledStep(of: Readonly<TaskState>, spent: { usage: { inputTokens: number; outputTokens: number }; cost: number; said?: string }): void {
    const task = this.#own(of);
    if (spent.said) task.lastWords = spent.said;
    task.inputTokens += spent.usage.inputTokens;
    task.outputTokens += spent.usage.outputTokens;
    task.cost = round6(task.cost + spent.cost);
  }

  finishTask(of: Readonly<TaskState>, status: TaskStatus, now: number, outcome: { message?: string; error?: TaskState['error']; verification?: Verification } = {}): void {
    const task = this.#own(of);
    task.status = status;
    task.completedAt = now;
    if (outcome.verification) task.verification = outcome.verification;
    if (outcome.message !== undefined) task.message = outcome.message;
    // A stopped task answers what the agent had said so far.
    else if (status === 'stopped') task.message = stoppedMessage(task);
    task.error = outcome.error;
    task.guardrail = undefined;
    task.humanReply = undefined;
    if (this.#current === task) this.#current = undefined;
    this.#previousTasks = [
      ...this.#previousTasks,
      {
        prompt: clip(task.params.prompt),
        status,
        result: clip(task.error ? `${task.error.code}: ${task.error.message}` : (task.message ?? '')),
      },
    ].slice(-KEEP_PREVIOUS_SUMMARIES);
    this.touch(now);
  }

  isTaskEnded(taskId: string): boolean {
    const t = this.#recent.get(taskId);
    return !!t && TERMINAL_TASK_STATUSES.includes(t.status) && t.recorded === true;
  }

  /** Ended, or waiting for a human: either way the caller has something to show. */
  isTaskSettled(taskId: string): boolean {
    return this.isTaskEnded(taskId) || this.#recent.get(taskId)?.status === 'guardrail_trigger';
  }

  taskView(taskId: string, now: number): TaskView | null {
    const t = this.#recent.get(taskId);
    return t ? toTaskView(this.sessionId, t, now) : null;
  }

  /** Keeps the last tasks for queries and inline waits; older ones are answered from the store. */
  private remember(task: TaskState): void {
    this.#recent.set(task.taskId, task);
    for (const taskId of this.#recent.keys()) {
      if (this.#recent.size <= KEEP_RECENT_TASKS) break;
      this.#recent.delete(taskId);
    }
  }

  /**
   * The session's own record of a task the workflow holds read-only (from beginTask). A task
   * stays among the recent ones while it runs and long after, so this finds it.
   */
  #own(of: Readonly<TaskState>): TaskState {
    const task = this.#recent.get(of.taskId);
    if (task !== of) throw new Error(`task ${of.taskId} is not a recent task of session ${this.sessionId}`);
    return task;
  }

  // ---- control -----------------------------------------------------------------------

  /** Validates a state message; throws the rejection the API reports. */
  assertStateChange(newState: 'pause' | 'resume' | 'stop' | 'terminate'): void {
    if (this.ended || this.#endRequested) throw reject('SESSION_NOT_FOUND', 'Session has ended');
    if (newState === 'terminate') return;
    const t = this.#current ?? this.#queued;
    if (!t) throw reject('NO_TASK_RUNNING', 'No task is running in this session');
    if (newState === 'pause' && t.status !== 'running') throw reject('INVALID_STATE', `Cannot pause a task that is ${t.status}`);
    if (newState === 'resume' && t.status !== 'paused') throw reject('INVALID_STATE', `Cannot resume a task that is ${t.status}`);
  }

  /** Applies a state message and answers the confirmation text. */
  applyStateChange(newState: 'pause' | 'resume' | 'stop' | 'terminate', now: number): string {
    this.assertStateChange(newState);
    this.touch(now);
    const t = this.#current ?? this.#queued;
    if (newState === 'terminate') {
      if (t) t.endRequest = 'terminate';
      this.#endRequested = 'terminated';
      return 'Session terminated';
    }
    if (!t) throw reject('NO_TASK_RUNNING', 'No task is running in this session'); // assertStateChange threw it already
    switch (newState) {
      case 'pause':
        t.status = 'paused';
        return 'Task paused';
      case 'resume':
        t.status = 'running';
        return 'Task resumed';
      case 'stop':
        t.endRequest = 'stop';
        return 'Task stopped';
    }
  }

  assertInteraction(): void {
    if (this.ended || this.#endRequested) throw reject('SESSION_NOT_FOUND', 'Session has ended');
    // A session still getting its first browser takes the interaction when it has one.
    if (!this.#workerId && this.#status !== 'pending') throw reject('SESSION_NOT_READY', 'The session has no browser yet');
  }

  /** The human takes the browser; a running task pauses. Answers whether the agent was stopped. */
  takeOver(now: number): boolean {
    this.touch(now);
    this.#manual = true;
    const t = this.#current;
    if (t && t.status === 'running') {
      t.status = 'paused';
      this.#pausedByTakeover = true;
      return true;
    }
    return false;
  }

  /** The human hands back; a task the takeover paused resumes. */
  release(now: number): boolean {
    this.touch(now);
    this.#manual = false;
    const t = this.#current;
    const resumed = t !== undefined && t.status === 'paused' && this.#pausedByTakeover;
    if (resumed) t.status = 'running';
    this.#pausedByTakeover = false;
    return resumed;
  }

  assertGuardrailAnswer(): void {
    this.#guardrailWaiting();
  }

  answerGuardrail(reply: string, now: number): string {
    const t = this.#guardrailWaiting();
    t.humanReply = reply;
    t.guardrail = undefined;
    t.status = 'running';
    this.touch(now);
    return 'Guardrail answered; task resumed';
  }

  /** The task whose guardrail waits for an answer; throws the rejection the API reports when there is none. */
  #guardrailWaiting(): TaskState {
    if (this.ended || this.#endRequested) throw reject('SESSION_NOT_FOUND', 'Session has ended');
    const t = this.#current;
    if (t?.status !== 'guardrail_trigger') throw reject('NO_GUARDRAIL_PENDING', 'No guardrail is waiting for an answer');
    return t;
  }

  // ---- one task's run (the workflow's calls; `of` is a task of this session) ---------

  /** The task ran out of its maxDuration; the loop ends it. */
  requestTimeout(of: Readonly<TaskState>): void {
    this.#own(of).endRequest ??= 'timeout';
  }

  /** The guardrail answer for the next step, handed out once. */
  takeHumanReply(of: Readonly<TaskState>): string | undefined {
    const task = this.#own(of);
    const reply = task.humanReply;
    task.humanReply = undefined;
    return reply;
  }

  /** The step that carried the answer did not use it: the next attempt gets it. */
  returnHumanReply(of: Readonly<TaskState>, reply: string | undefined): void {
    const task = this.#own(of);
    if (reply !== undefined && task.humanReply === undefined) task.humanReply = reply;
  }

  /**
   * Whether this step hands the task's prompt, parameters and previous tasks to the
   * session's worker: once per task, again when the session moved or the worker lost them.
   */
  handOverContext(of: Readonly<TaskState>): boolean {
    const task = this.#own(of);
    if (task.contextOn === this.#workerId) return false;
    task.contextOn = this.#workerId;
    return true;
  }

  /** The worker no longer holds the task's context; answers whether to hand it over again. */
  contextLost(of: Readonly<TaskState>): boolean {
    const task = this.#own(of);
    task.contextOn = undefined;
    task.contextHandOvers = (task.contextHandOvers ?? 0) + 1;
    return task.contextHandOvers <= MAX_HAND_OVERS;
  }

  /** Whether this step hands the secret values to the worker (once per task and worker). */
  handOverSecrets(of: Readonly<TaskState>): boolean {
    const task = this.#own(of);
    if (!task.params.secrets?.length || task.secretsOn === this.#workerId) return false;
    task.secretsOn = this.#workerId;
    return true;
  }

  /** The worker lost the secret values (restarted under the same id); answers whether to hand them over again. */
  secretsLost(of: Readonly<TaskState>): boolean {
    const task = this.#own(of);
    task.secretsOn = undefined;
    task.secretHandOvers = (task.secretHandOvers ?? 0) + 1;
    return task.secretHandOvers <= MAX_HAND_OVERS;
  }

  /** The agent asks a human: the task waits for answerGuardrail. */
  awaitHuman(of: Readonly<TaskState>, question: { type: string; value: string }): void {
    const task = this.#own(of);
    task.status = 'guardrail_trigger';
    task.guardrail = question;
  }

  /** The task's end is stored: waiters get the outcome. */
  markRecorded(of: Readonly<TaskState>): void {
    this.#own(of).recorded = true;
  }
}

/** Summaries of earlier tasks stay short: they travel with every continue-as-new. */
function clip(text: string): string {
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS)}…` : text;
}

export function emptyUsage(): Usage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, completion_time: 0, cost: 0 };
}

export function usageOf(t: TaskState, now: number): Usage {
  const end = t.completedAt ?? now;
  return {
    prompt_tokens: t.inputTokens,
    completion_tokens: t.outputTokens,
    total_tokens: t.inputTokens + t.outputTokens,
    completion_time: Math.round((end - (t.startedAt ?? t.createdAt)) / 10) / 100,
    cost: t.cost,
    ...(t.proxyBytes !== undefined ? { proxy_bytes: t.proxyBytes, proxy_cost: t.proxyCost ?? 0 } : {}),
    ...(t.params.replay ? { replayed_steps: t.replayedSteps ?? 0, agent_steps: t.steps - (t.replayedSteps ?? 0) } : {}),
  };
}

export function toTaskView(sessionId: string, t: TaskState, now: number): TaskView {
  return {
    taskId: t.taskId,
    sessionId,
    status: t.status,
    usage: usageOf(t, now),
    message: t.message,
    error: t.error?.message,
    code: t.error?.code,
    details: t.error?.details,
    guardrail: t.guardrail,
    ...(t.verification ? { verification: t.verification } : {}),
    ...(t.params.replay ? { replayOf: t.params.replay.of, replayRoot: t.params.replay.root } : {}),
    createdAt: new Date(t.createdAt).toISOString(),
    completedAt: t.completedAt ? new Date(t.completedAt).toISOString() : undefined,
  };
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/**
 * What a stopped task answers as its message: what the agent had said so far (its last
 * words), or else a summary of its steps.
 */
export function stoppedMessage(task: Pick<TaskState, 'lastWords' | 'lastAction' | 'steps'>): string {
  if (task.lastWords) return task.lastWords;
  if (!task.steps) return 'Stopped before the agent took a step.';
  return `Stopped after ${task.steps} step${task.steps === 1 ? '' : 's'}; the last: ${task.lastAction ?? 'an action'}.`;
}
