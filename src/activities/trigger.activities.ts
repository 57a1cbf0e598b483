import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { canRetryLater, isServiceError, toTemporalFailure, type ErrorCode } from '../contracts/errors';
import type { Logger } from '../logger';
import type { ProfileSource } from '../contracts/profiles';
import { CronJobsRepository } from '../store/cron-jobs.repository';
import { type CronJobRecord } from '../contracts/cron-job-record';
import { newSessionIds, SessionAdmission } from '../store/session-admission';
import type { Store } from '../store/store';
import { TriggerRunsRepository } from '../store/trigger-runs.repository';
import { runLeaseMs } from '../contracts/retry-policy';
import { sessionInput } from '../sessions/session-input';
import { triggerTaskParams } from '../sessions/task-checks';
import { TriggerSchedules } from '../triggers/schedules';
import {
  runChatDeliveryId,
  runDeliveryId,
  type BeginRunResult,
  type OpenedRunSession,
  type OpenRunSessionInput,
  type RunFailure,
  type RunStatus,
  type SettledRun,
  type SettleRunInput,
} from '../contracts/trigger-types';
import type { ReplaySource, TaskView, Usage } from '../contracts/session-types';

/** A failure of the run; the catalogue says whether another attempt of the run could mend it. */
const failure = (code: ErrorCode, message: string): RunFailure => ({ code, message, retryable: canRetryLater(code) });

/**
 * Activities of trigger runs (shared queue): the run record, the overlap lock, the
 * session the run opens (slot, environment lock and record, as the API does before it
 * starts a session workflow), failure counting and the auto-pause. The Temporal client is
 * the worker's own (from the activity context) unless one is passed in.
 */
export function createTriggerActivities(deps: { config: Config; store: Pick<Store, 'db' | 'users' | 'sessions' | 'tasks'>; logger: Logger; temporal?: Client }) {
  const { config, store } = deps;
  const logger = deps.logger.child({ component: 'trigger-activities' });
  const jobs = new CronJobsRepository(store.db);
  const runs = new TriggerRunsRepository(store.db);

  /** How many of the trigger's latest finished runs, newest first, ended by their budget. */
  const budgetEndsInARow = async (cronJobId: string): Promise<number> => {
    const finished = (await runs.recent(cronJobId, 20)).filter((r) => r.status === 'completed' || r.status === 'failed');
    const firstOther = finished.findIndex((r) => r.code !== 'TASK_BUDGET_EXCEEDED');
    return firstOther === -1 ? finished.length : firstOther;
  };
  /** A replaying trigger's source: the newest recording in the line of its last successful run (none yet: the agent runs and records). */
  const replayOfLastSuccess = async (triggerId: string, userId: string): Promise<{ replay?: ReplaySource }> => {
    const taskId = await runs.lastCompletedTaskId(triggerId);
    const task = taskId ? await store.tasks.owned(userId, taskId) : null;
    if (!task || task.status !== 'task_completed') return {};
    const root = task.replayRoot ?? task._id;
    return { replay: { of: task._id, root, source: (await store.tasks.newestOfLine(userId, root)) ?? task._id } };
  };
  const admission = new SessionAdmission({ store, config });
  const schedules = () => new TriggerSchedules(deps.temporal ?? Context.current().client, config.TEMPORAL_TASK_QUEUE);

  /** nextRunAt from the schedule's description; a failure to read it never fails a run. */
  const refreshNextRun = async (job: Pick<CronJobRecord, '_id' | 'status'>) => {
    try {
      await jobs.setNextRunAt(job._id, job.status === 'paused' ? null : await schedules().nextRunAt(job._id));
    } catch (err) {
      logger.warn({ triggerId: job._id, err: String(err) }, 'nextRunAt not refreshed');
    }
  };

  /** Why the owner cannot run anything now, or null. */
  const ownerProblem = async (userId: string): Promise<RunFailure | null> => {
    const user = await store.users.get(userId);
    if (!user) return failure('USER_NOT_FOUND', 'The owner of this trigger no longer exists');
    if (user.status !== 'active') return failure('ACCOUNT_DEACTIVATED', 'Account is deactivated');
    const required = config.MIN_BALANCE_USD;
    if (user.balance < required || user.balance <= 0) return failure('INSUFFICIENT_BALANCE', `Insufficient balance: ${user.balance} USD, at least ${required} USD is required`);
    return null;
  };

  return {
    /**
     * Begins an attempt: takes the trigger's overlap lock (another run still going means
     * this one is recorded as skipped), records the run as running, reads the trigger
     * and checks the owner can pay.
     */
    async beginTriggerRun(input: { triggerId: string; runId: string; attempt: number; scheduledAt: string | null; workflowId: string }): Promise<BeginRunResult> {
      const job = await jobs.getById(input.triggerId);
      if (!job) return { kind: 'gone' };
      const earlier = await runs.getById(input.runId);
      if (earlier?.finishedAt) return { kind: 'finished', status: earlier.status };
      const run = { id: input.runId, cronJobId: job._id, userId: job.userId, attempt: input.attempt, scheduledAt: input.scheduledAt ? new Date(input.scheduledAt) : null, workflowId: input.workflowId };
      const lock = await jobs.acquireRunLock(job._id, input.runId, runLeaseMs(job.retryPolicy));
      if (!lock.acquired) {
        await runs.recordSkipped(run, `Skipped: run ${lock.holder ?? 'another run'} of this trigger was still running`);
        logger.info({ triggerId: job._id, runId: input.runId, runningRunId: lock.holder }, 'trigger run skipped (overlap)');
        await refreshNextRun(job);
        return { kind: 'skipped', runningRunId: lock.holder };
      }
      if (lock.previous) await runs.markAbandoned(lock.previous);
      await runs.begin(run);
      await refreshNextRun(job);
      const trigger = {
        triggerId: job._id,
        userId: job.userId,
        environmentId: job.environmentId,
        policyId: job.policyId,
        prompt: job.prompt,
        startingUrl: job.startingUrl,
        outputType: job.outputType,
        outputSchema: job.outputSchema ? (JSON.parse(job.outputSchema) as Record<string, unknown>) : null,
        ...(typeof job.maxCost === 'number' ? { maxCost: job.maxCost } : {}),
        ...(job.replay ? await replayOfLastSuccess(job._id, job.userId) : {}),
      };
      logger.info({ triggerId: job._id, runId: input.runId, attempt: input.attempt }, 'trigger run started');
      const problem = await ownerProblem(job.userId);
      return problem ? { kind: 'run', trigger, failure: problem } : { kind: 'run', trigger };
    },

    /** The ids of the session a run opens: the same 128-bit random source as every session. */
    async newRunSessionIds(): Promise<{ sessionId: string; taskId: string }> {
      return newSessionIds();
    },

    /**
     * Admits the run's session as the API admits one (src/store/session-admission.ts): a
     * session slot of the owner, the environment's profile lock and the session record.
     * Answers the session's input, built as the API builds one (src/sessions/): its one task
     * ends the session. A retry after success answers the same input. A refusal is a non-retryable failure of its catalogue code.
     */
    async openRunSession({ runId, trigger, sessionId, taskId }: OpenRunSessionInput): Promise<OpenedRunSession> {
      const profile: ProfileSource = { kind: 'environment', id: trigger.environmentId, userId: trigger.userId };
      const input = sessionInput(config, {
        sessionId,
        userId: trigger.userId,
        profile,
        ...(trigger.policyId ? { policyId: trigger.policyId } : {}),
        initialTask: { taskId, params: triggerTaskParams(trigger) },
        singleTask: true,
      });
      const opened = { input, taskQueue: config.TEMPORAL_TASK_QUEUE };
      if (await store.sessions.get(sessionId)) return opened;
      try {
        await admission.admit({ userId: trigger.userId, profile, sessionId });
      } catch (err) {
        if (isServiceError(err)) {
          const message = err.code === 'USER_NOT_FOUND' ? 'The owner of this trigger no longer exists' : err.message;
          throw toTemporalFailure(err, { message, details: { ...err.details, ...(err.code === 'SESSION_LIMIT_REACHED' ? {} : { environmentId: profile.id }) }, retry: false });
        }
        throw err;
      }
      await runs.setSession(runId, sessionId, taskId);
      logger.info({ triggerId: trigger.triggerId, runId, sessionId }, 'trigger run session opened');
      return opened;
    },

    /** The session workflow could not be started: what openRunSession took is given back. */
    async abandonRunSession({ sessionId, userId, environmentId }: { sessionId: string; userId: string; environmentId: string }): Promise<void> {
      await admission.abandon({ sessionId, userId, profile: { kind: 'environment', id: environmentId, userId } });
    },

    /**
     * Ends an attempt: reads the task's outcome, records it on the run, and on the final
     * attempt counts the failure (pausing the trigger and its schedule at the limit) or
     * resets the count, releases the overlap lock and answers the delivery to make.
     */
    async settleTriggerRun(input: SettleRunInput): Promise<SettledRun> {
      const job = await jobs.getById(input.triggerId);
      const task = input.sessionId && input.taskId ? await store.tasks.get(input.sessionId, input.taskId) : null;
      const outcome = runOutcome(input, task);
      const final = outcome.status === 'completed' || !outcome.retryable || input.attempt >= input.maxAttempts;
      const log = logger.child({ triggerId: input.triggerId, runId: input.runId, attempt: input.attempt });

      if (!final) {
        await runs.recordAttemptFailure(input.runId, { code: outcome.code!, error: outcome.error! });
        if (job) await jobs.extendRunLock(job._id, input.runId, runLeaseMs(job.retryPolicy));
        log.info({ code: outcome.code }, 'trigger run attempt failed; it will be attempted again');
        return { status: 'running', final: false, code: outcome.code, error: outcome.error, usage: outcome.usage ?? undefined };
      }

      await runs.finish(input.runId, { status: outcome.status, result: outcome.result, error: outcome.error ?? null, code: outcome.code ?? null, usage: outcome.usage, sessionId: input.sessionId ?? null, taskId: input.taskId ?? null });
      if (!job) return { status: outcome.status, final: true, code: outcome.code, error: outcome.error };

      let autoPaused = false;
      if (outcome.status === 'completed') {
        await jobs.resetFailures(job._id, input.runId);
      } else {
        const counted = await jobs.countFailure(job._id, input.runId);
        const budgetEnds = outcome.code === 'TASK_BUDGET_EXCEEDED' ? await budgetEndsInARow(job._id) : 0;
        const why =
          counted && counted.consecutiveFailures >= counted.maxConsecutiveFailures
            ? `Paused after ${counted.consecutiveFailures} consecutive failed runs`
            : budgetEnds >= BUDGET_ENDS_TO_PAUSE
              ? `Paused after ${budgetEnds} runs in a row ended by their budget (TASK_BUDGET_EXCEEDED)`
              : undefined;
        if (counted && counted.status === 'active' && why) {
          // The schedule first, then the record: a retry after a failed pause finds the
          // record still active and pauses again, so no schedule runs on behind a paused trigger.
          await schedules().pause(job._id, why);
          autoPaused = await jobs.autoPause(job._id);
          log.warn({ failures: counted.consecutiveFailures, budgetEnds }, 'trigger paused itself: ' + why);
        }
      }
      await jobs.releaseRunLock(job._id, input.runId, outcome.status);
      if (!autoPaused) await refreshNextRun(job);

      let delivery: SettledRun['delivery'];
      if ((job.deliveryMode === 'webhook' || job.deliveryMode === 'both') && job.webhook) {
        delivery = { deliveryId: runDeliveryId(input.runId), userId: job.userId, webhook: job.webhook, target: { kind: 'run', runId: input.runId, cronJobId: job._id } };
      }
      let chatDelivery: SettledRun['chatDelivery'];
      if (job.deliveryMode === 'bot' || job.deliveryMode === 'both') {
        chatDelivery = { deliveryId: runChatDeliveryId(input.runId), userId: job.userId, environmentId: job.environmentId, triggerName: job.name, target: { kind: 'run', runId: input.runId, cronJobId: job._id } };
      }
      log.info({ status: outcome.status, code: outcome.code, cost: outcome.usage?.cost }, 'trigger run finished');
      return { status: outcome.status, final: true, code: outcome.code, error: outcome.error, usage: outcome.usage ?? undefined, delivery, chatDelivery, autoPaused };
    },
  };
}

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

export type TriggerActivities = ReturnType<typeof createTriggerActivities>;
