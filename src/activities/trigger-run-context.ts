import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { canRetryLater, type ErrorCode } from '../contracts/errors';
import type { CronJobRecord } from '../contracts/cron-job-record';
import type { RunFailure } from '../contracts/trigger-types';
import type { Logger } from '../logger';
import { CronJobsRepository } from '../store/cron-jobs.repository';
import { SessionAdmission } from '../store/session-admission';
import type { Store } from '../store/store';
import { TriggerRunsRepository } from '../store/trigger-runs.repository';
import { TriggerSchedules } from '../triggers/schedules';

/** What the trigger-run activities are built from. The Temporal client is the worker's own (from the activity context) unless one is passed in. */
export interface TriggerActivitiesDeps {
  config: Config;
  store: Pick<Store, 'db' | 'users' | 'sessions' | 'tasks'>;
  logger: Logger;
  temporal?: Client;
}

/** What every trigger-run activity works with: the triggers and their runs, session admission and the triggers' schedules. */
export interface TriggerRunContext {
  config: Config;
  store: TriggerActivitiesDeps['store'];
  logger: Logger;
  jobs: CronJobsRepository;
  runs: TriggerRunsRepository;
  admission: SessionAdmission;
  schedules: () => TriggerSchedules;
}

export function triggerRunContext(deps: TriggerActivitiesDeps): TriggerRunContext {
  const { config, store } = deps;
  return {
    config,
    store,
    logger: deps.logger.child({ component: 'trigger-activities' }),
    jobs: new CronJobsRepository(store.db),
    runs: new TriggerRunsRepository(store.db),
    admission: new SessionAdmission({ store, config }),
    schedules: () => new TriggerSchedules(deps.temporal ?? Context.current().client, config.TEMPORAL_TASK_QUEUE),
  };
}

/** A failure of the run; the catalogue says whether another attempt of the run could mend it. */
export const failure = (code: ErrorCode, message: string): RunFailure => ({ code, message, retryable: canRetryLater(code) });

/** nextRunAt from the schedule's description; a failure to read it never fails a run. */
export async function refreshNextRun(ctx: TriggerRunContext, job: Pick<CronJobRecord, '_id' | 'status'>): Promise<void> {
  try {
    await ctx.jobs.setNextRunAt(job._id, job.status === 'paused' ? null : await ctx.schedules().nextRunAt(job._id));
  } catch (err) {
    ctx.logger.warn({ triggerId: job._id, err: String(err) }, 'nextRunAt not refreshed');
  }
}
