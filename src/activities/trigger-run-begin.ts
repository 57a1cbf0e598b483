import type { CronJobRecord } from '../contracts/cron-job-record';
import { runLeaseMs } from '../contracts/retry-policy';
import type { ReplaySource } from '../contracts/session-types';
import type { BeginRunResult, RunFailure, RunTrigger } from '../contracts/trigger-types';
import { failure, refreshNextRun, type TriggerRunContext } from './trigger-run-context';

export interface BeginRunInput {
  triggerId: string;
  runId: string;
  attempt: number;
  scheduledAt: string | null;
  workflowId: string;
}

/**
 * Begins an attempt: takes the trigger's overlap lock (another run still going means
 * this one is recorded as skipped), records the run as running, reads the trigger
 * and checks the owner can pay.
 */
export async function beginTriggerRun(ctx: TriggerRunContext, input: BeginRunInput): Promise<BeginRunResult> {
  const { jobs, runs, logger } = ctx;
  const job = await jobs.getById(input.triggerId);
  if (!job) return { kind: 'gone' };
  const earlier = await runs.getById(input.runId);
  if (earlier?.finishedAt) return { kind: 'finished', status: earlier.status };
  const run = { id: input.runId, cronJobId: job._id, userId: job.userId, attempt: input.attempt, scheduledAt: input.scheduledAt ? new Date(input.scheduledAt) : null, workflowId: input.workflowId };
  const lock = await jobs.acquireRunLock(job._id, input.runId, runLeaseMs(job.retryPolicy));
  if (!lock.acquired) {
    await runs.recordSkipped(run, `Skipped: run ${lock.holder ?? 'another run'} of this trigger was still running`);
    logger.info({ triggerId: job._id, runId: input.runId, runningRunId: lock.holder }, 'trigger run skipped (overlap)');
    await refreshNextRun(ctx, job);
    return { kind: 'skipped', runningRunId: lock.holder };
  }
  if (lock.previous) await runs.markAbandoned(lock.previous);
  await runs.begin(run);
  await refreshNextRun(ctx, job);
  const trigger = await runTrigger(ctx, job);
  logger.info({ triggerId: job._id, runId: input.runId, attempt: input.attempt }, 'trigger run started');
  const problem = await ownerProblem(ctx, job.userId);
  return problem ? { kind: 'run', trigger, failure: problem } : { kind: 'run', trigger };
}

/** What the run does, read from its trigger. */
async function runTrigger(ctx: TriggerRunContext, job: CronJobRecord): Promise<RunTrigger> {
  return {
    triggerId: job._id,
    userId: job.userId,
    environmentId: job.environmentId,
    policyId: job.policyId,
    prompt: job.prompt,
    startingUrl: job.startingUrl,
    outputType: job.outputType,
    outputSchema: job.outputSchema ? (JSON.parse(job.outputSchema) as Record<string, unknown>) : null,
    ...(typeof job.maxCost === 'number' ? { maxCost: job.maxCost } : {}),
    ...(job.replay ? await replayOfLastSuccess(ctx, job._id, job.userId) : {}),
  };
}

/** A replaying trigger's source: the newest recording in the line of its last successful run (none yet: the agent runs and records). */
async function replayOfLastSuccess(ctx: TriggerRunContext, triggerId: string, userId: string): Promise<{ replay?: ReplaySource }> {
  const taskId = await ctx.runs.lastCompletedTaskId(triggerId);
  const task = taskId ? await ctx.store.tasks.owned(userId, taskId) : null;
  if (!task || task.status !== 'task_completed') return {};
  const root = task.replayRoot ?? task._id;
  return { replay: { of: task._id, root, source: (await ctx.store.tasks.newestOfLine(userId, root)) ?? task._id } };
}

/** Why the owner cannot run anything now, or null. */
async function ownerProblem(ctx: TriggerRunContext, userId: string): Promise<RunFailure | null> {
  const user = await ctx.store.users.get(userId);
  if (!user) return failure('USER_NOT_FOUND', 'The owner of this trigger no longer exists');
  if (user.status !== 'active') return failure('ACCOUNT_DEACTIVATED', 'Account is deactivated');
  const required = ctx.config.MIN_BALANCE_USD;
  if (user.balance < required || user.balance <= 0) return failure('INSUFFICIENT_BALANCE', `Insufficient balance: ${user.balance} USD, at least ${required} USD is required`);
  return null;
}
