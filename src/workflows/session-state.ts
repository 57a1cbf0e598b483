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
} from './types';
import { TERMINAL_TASK_STATUSES } from './types';

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
  message?: string;
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
}

const KEEP_RECENT_TASKS = 20;
const KEEP_PREVIOUS_SUMMARIES = 10;

export const reject = (code: string, message: string, details?: Record<string, unknown>): ApplicationFailure =>
  ApplicationFailure.create({ type: code, message, nonRetryable: true, details: details ? [details] : undefined });

export class SessionState {
  status: SessionStatus = 'pending';
  workerId?: string;
  taskQueue?: string;
  endReason?: EndReason;
  endRequested?: EndReason;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  current?: TaskState;
  /** A human holds the browser (takeOverControl); the agent waits. */
  manual = false;
  private pausedByTakeover = false;
  queued?: TaskState;
  readonly recent = new Map<string, TaskState>();
  previousTasks: PreviousTask[];
  lastActivityAt: number;

  constructor(
    readonly sessionId: string,
    now: number,
    carried?: { previousTasks: PreviousTask[]; lastActivityAt: number },
  ) {
    this.previousTasks = carried?.previousTasks ?? [];
    this.lastActivityAt = carried?.lastActivityAt ?? now;
  }

  get ended(): boolean {
    return this.endReason !== undefined;
  }

  touch(now: number): void {
    this.lastActivityAt = now;
  }

  view(): SessionView {
    return {
      sessionId: this.sessionId,
      status: this.status,
      workerId: this.workerId,
      currentTaskId: this.current?.taskId ?? this.queued?.taskId,
      endReason: this.endReason,
      error: this.error,
      manual: this.manual,
    };
  }

  // ---- tasks -------------------------------------------------------------------------

  assertCanStartTask(): void {
    if (this.ended || this.endRequested) throw reject('SESSION_NOT_FOUND', 'Session has ended');
    const busy = this.queued ?? this.current;
    if (busy) throw reject('TASK_ALREADY_RUNNING', 'A task is already running in this session', { taskId: busy.taskId });
  }

  enqueueTask(taskId: string, params: TaskParams, now: number): void {
    this.assertCanStartTask();
    const task: TaskState = { taskId, params, status: 'running', createdAt: now, inputTokens: 0, outputTokens: 0, cost: 0, steps: 0 };
    this.queued = task;
    this.remember(task);
    this.touch(now);
  }

  /** Moves the queued task to current. */
  beginTask(now: number): TaskState {
    const task = this.queued;
    if (!task) throw new Error('no queued task');
    this.queued = undefined;
    this.current = task;
    task.startedAt = now;
    return task;
  }

  recordStep(task: TaskState, result: StepResult & { cost?: number }): void {
    task.steps += 1;
    task.inputTokens += result.usage.inputTokens;
    task.outputTokens += result.usage.outputTokens;
    task.cost = round6(task.cost + (result.cost ?? 0));
    if (result.proxy) {
      task.proxyBytes = (task.proxyBytes ?? 0) + result.proxy.bytes;
      task.proxyCost = round6((task.proxyCost ?? 0) + result.proxy.cost);
    }
    if (result.message) task.message = result.message;
  }

  /** A step cancelled halfway: its model tokens and their cost count all the same (the step itself does not). */
  recordCancelledStep(task: TaskState, spent: { usage: { inputTokens: number; outputTokens: number }; cost: number }): void {
    task.inputTokens += spent.usage.inputTokens;
    task.outputTokens += spent.usage.outputTokens;
    task.cost = round6(task.cost + spent.cost);
  }

  finishTask(task: TaskState, status: TaskStatus, now: number, outcome: { message?: string; error?: TaskState['error'] } = {}): void {
    task.status = status;
    task.completedAt = now;
    if (outcome.message !== undefined) task.message = outcome.message;
    task.error = outcome.error;
    task.guardrail = undefined;
    task.humanReply = undefined;
    if (this.current === task) this.current = undefined;
    this.previousTasks = [
      ...this.previousTasks,
      { prompt: task.params.prompt, status, result: task.error ? `${task.error.code}: ${task.error.message}` : (task.message ?? '') },
    ].slice(-KEEP_PREVIOUS_SUMMARIES);
    this.touch(now);
  }

  isTaskEnded(taskId: string): boolean {
    const t = this.recent.get(taskId);
    return !!t && TERMINAL_TASK_STATUSES.includes(t.status) && t.recorded === true;
  }

  /** Ended, or waiting for a human: either way the caller has something to show. */
  isTaskSettled(taskId: string): boolean {
    return this.isTaskEnded(taskId) || this.recent.get(taskId)?.status === 'guardrail_trigger';
  }

  taskView(taskId: string, now: number): TaskView | null {
    const t = this.recent.get(taskId);
    return t ? toTaskView(this.sessionId, t, now) : null;
  }

  /** Keeps the last tasks for queries and inline waits; older ones are answered from the store. */
  private remember(task: TaskState): void {
    this.recent.set(task.taskId, task);
    while (this.recent.size > KEEP_RECENT_TASKS) this.recent.delete(this.recent.keys().next().value!);
  }

  // ---- control -----------------------------------------------------------------------

  /** Validates a state message; throws the rejection the API reports. */
  assertStateChange(newState: 'pause' | 'resume' | 'stop' | 'terminate'): void {
    if (this.ended || this.endRequested) throw reject('SESSION_NOT_FOUND', 'Session has ended');
    if (newState === 'terminate') return;
    const t = this.current ?? this.queued;
    if (!t) throw reject('NO_TASK_RUNNING', 'No task is running in this session');
    if (newState === 'pause' && t.status !== 'running') throw reject('INVALID_STATE', `Cannot pause a task that is ${t.status}`);
    if (newState === 'resume' && t.status !== 'paused') throw reject('INVALID_STATE', `Cannot resume a task that is ${t.status}`);
  }

  /** Applies a state message and answers the confirmation text. */
  applyStateChange(newState: 'pause' | 'resume' | 'stop' | 'terminate', now: number): string {
    this.assertStateChange(newState);
    this.touch(now);
    const t = this.current ?? this.queued;
    switch (newState) {
      case 'pause':
        t!.status = 'paused';
        return 'Task paused';
      case 'resume':
        t!.status = 'running';
        return 'Task resumed';
      case 'stop':
        t!.endRequest = 'stop';
        return 'Task stopped';
      case 'terminate':
        if (t) t.endRequest = 'terminate';
        this.endRequested = 'terminated';
        return 'Session terminated';
    }
  }

  assertInteraction(): void {
    if (this.ended || this.endRequested) throw reject('SESSION_NOT_FOUND', 'Session has ended');
    if (!this.taskQueue) throw reject('SESSION_NOT_READY', 'The session has no browser yet');
  }

  /** The human takes the browser; a running task pauses. Answers whether the agent was stopped. */
  takeOver(now: number): boolean {
    this.touch(now);
    this.manual = true;
    const t = this.current;
    if (t && t.status === 'running') {
      t.status = 'paused';
      this.pausedByTakeover = true;
      return true;
    }
    return false;
  }

  /** The human hands back; a task the takeover paused resumes. */
  release(now: number): boolean {
    this.touch(now);
    this.manual = false;
    const t = this.current;
    const resumed = !!t && t.status === 'paused' && this.pausedByTakeover;
    if (resumed) t!.status = 'running';
    this.pausedByTakeover = false;
    return resumed;
  }

  assertGuardrailAnswer(): void {
    if (this.ended || this.endRequested) throw reject('SESSION_NOT_FOUND', 'Session has ended');
    if (this.current?.status !== 'guardrail_trigger') throw reject('NO_GUARDRAIL_PENDING', 'No guardrail is waiting for an answer');
  }

  answerGuardrail(reply: string, now: number): string {
    this.assertGuardrailAnswer();
    const t = this.current!;
    t.humanReply = reply;
    t.guardrail = undefined;
    t.status = 'running';
    this.touch(now);
    return 'Guardrail answered; task resumed';
  }
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
    createdAt: new Date(t.createdAt).toISOString(),
    completedAt: t.completedAt ? new Date(t.completedAt).toISOString() : undefined,
  };
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

