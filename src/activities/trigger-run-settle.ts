import { canRetryLater } from '../contracts/errors';
import type { CronJobRecord } from '../contracts/cron-job-record';
import { runLeaseMs } from '../contracts/retry-policy';
import type { TaskView, Usage } from '../contracts/session-types';
import { runChatDeliveryId, runDeliveryId, type RunStatus, type SettledRun, type SettleRunInput } from '../contracts/trigger-types';
import type { Logger } from '../logger';
import { refreshNextRun, type TriggerRunContext } from './trigger-run-context';

/** Runs in a row ended by their budget after which a trigger pauses itself (whatever its maxConsecutiveFailures). */
export const BUDGET_ENDS_TO_PAUSE = 3;

export interface RunOutcome {
  status: Exclude<RunStatus, 'running' | 'skipped'>;
  result: string | null;
  code?: string;
  error?: string;
  usage: Usage | null;
  retryable: boolean;
}

/**
 * Ends an attempt: reads the task's outcome, records it on the run, and on the final
 * attempt counts the failure (pausing the trigger and its schedule at the limit) or
 * resets the count, releases the overlap lock and answers the delivery to make.
 */
export async function settleTriggerRun(ctx: TriggerRunContext, input: SettleRunInput): Promise<SettledRun> {
  const { jobs, runs } = ctx;
  const job = await jobs.getById(input.triggerId);
  const task = input.sessionId && input.taskId ? await ctx.store.tasks.get(input.sessionId, input.taskId) : null;
  const outcome = runOutcome(input, task);
  const final = outcome.status === 'completed' || !outcome.retryable || input.attempt >= input.maxAttempts;
  const log = ctx.logger.child({ triggerId: input.triggerId, runId: input.runId, attempt: input.attempt });

  if (!final) {
    await runs.recordAttemptFailure(input.runId, { code: outcome.code!, error: outcome.error! });
    if (job) await jobs.extendRunLock(job._id, input.runId, runLeaseMs(job.retryPolicy));
    log.info({ code: outcome.code }, 'trigger run attempt failed; it will be attempted again');
    return { status: 'running', final: false, code: outcome.code, error: outcome.error, usage: outcome.usage ?? undefined };
  }

  await runs.finish(input.runId, { status: outcome.status, result: outcome.result, error: outcome.error ?? null, code: outcome.code ?? null, usage: outcome.usage, sessionId: input.sessionId ?? null, taskId: input.taskId ?? null });
  if (!job) return { status: outcome.status, final: true, code: outcome.code, error: outcome.error };

  const autoPaused = await countOutcome(ctx, job, input.runId, outcome, log);
  await jobs.releaseRunLock(job._id, input.runId, outcome.status);
  if (!autoPaused) await refreshNextRun(ctx, job);

  const { delivery, chatDelivery } = deliveriesOf(job, input.runId);
  log.info({ status: outcome.status, code: outcome.code, cost: outcome.usage?.cost }, 'trigger run finished');
  return { status: outcome.status, final: true, code: outcome.code, error: outcome.error, usage: outcome.usage ?? undefined, delivery, chatDelivery, autoPaused };
}

/**
 * Counts a run's final outcome on its trigger: a success resets the count of failures, a
 * failure adds to it and, at the limit, pauses the trigger. Answers whether it paused.
 */
async function countOutcome(ctx: TriggerRunContext, job: CronJobRecord, runId: string, outcome: RunOutcome, log: Logger): Promise<boolean> {
  if (outcome.status === 'completed') {
    await ctx.jobs.resetFailures(job._id, runId);
    return false;
  }
  const counted = await ctx.jobs.countFailure(job._id, runId);
  const budgetEnds = outcome.code === 'TASK_BUDGET_EXCEEDED' ? await budgetEndsInARow(ctx, job._id) : 0;
  const why = pauseReason(counted, budgetEnds);
  if (!counted || counted.status !== 'active' || !why) return false;
  // The schedule first, then the record: a retry after a failed pause finds the
  // record still active and pauses again, so no schedule runs on behind a paused trigger.
  await ctx.schedules().pause(job._id, why);
  const autoPaused = await ctx.jobs.autoPause(job._id);
  log.warn({ failures: counted.consecutiveFailures, budgetEnds }, 'trigger paused itself: ' + why);
  return autoPaused;
}

/** Why the trigger pauses itself after this failure, or undefined: too many failures in a row, or too many runs in a row ended by their budget. */
function pauseReason(counted: CronJobRecord | null, budgetEnds: number): string | undefined {
  if (counted && counted.consecutiveFailures >= counted.maxConsecutiveFailures) return `Paused after ${counted.consecutiveFailures} consecutive failed runs`;
  if (budgetEnds >= BUDGET_ENDS_TO_PAUSE) return `Paused after ${budgetEnds} runs in a row ended by their budget (TASK_BUDGET_EXCEEDED)`;
  return undefined;
}

/** How many of the trigger's latest finished runs, newest first, ended by their budget. */
async function budgetEndsInARow(ctx: TriggerRunContext, cronJobId: string): Promise<number> {
  const finished = (await ctx.runs.recent(cronJobId, 20)).filter((r) => r.status === 'completed' || r.status === 'failed');
  const firstOther = finished.findIndex((r) => r.code !== 'TASK_BUDGET_EXCEEDED');
  return firstOther === -1 ? finished.length : firstOther;
}

/** The deliveries of a finished run its trigger asks for: to its webhook, to its environment's chat, both or none. */
function deliveriesOf(job: CronJobRecord, runId: string): Pick<SettledRun, 'delivery' | 'chatDelivery'> {
  let delivery: SettledRun['delivery'];
  if ((job.deliveryMode === 'webhook' || job.deliveryMode === 'both') && job.webhook) {
    delivery = { deliveryId: runDeliveryId(runId), userId: job.userId, webhook: job.webhook, target: { kind: 'run', runId, cronJobId: job._id } };
  }
  let chatDelivery: SettledRun['chatDelivery'];
  if (job.deliveryMode === 'bot' || job.deliveryMode === 'both') {
    chatDelivery = { deliveryId: runChatDeliveryId(runId), userId: job.userId, environmentId: job.environmentId, triggerName: job.name, target: { kind: 'run', runId, cronJobId: job._id } };
  }
  return { delivery, chatDelivery };
}

/** The run's outcome from what happened: a failure before the task, the task's record, or the session's own error. */
export function runOutcome(input: Pick<SettleRunInput, 'failure' | 'sessionError'>, task: TaskView | null): RunOutcome {
  if (input.failure) return { status: 'failed', result: null, code: input.failure.code, error: input.failure.message, usage: null, retryable: input.failure.retryable };
  if (task?.status === 'task_completed') return { status: 'completed', result: task.message ?? '', usage: task.usage, retryable: false };
  if (task?.status === 'failed') {
    return { status: task.code === 'TASK_TIMEOUT' ? 'timed_out' : 'failed', result: task.message ?? null, code: task.code ?? 'TASK_FAILED', error: task.error ?? 'Task failed', usage: task.usage, retryable: canRetryLater(task.code ?? 'TASK_FAILED') };
  }
  if (task?.status === 'stopped') return { status: 'failed', result: task.message ?? null, code: 'TASK_STOPPED', error: 'The task was stopped before it finished', usage: task.usage, retryable: true };
  const err = input.sessionError ?? { code: 'SESSION_FAILED', message: 'The session ended before the task finished' };
  return { status: 'failed', result: null, code: err.code, error: err.message, usage: task?.usage ?? null, retryable: true };
}
