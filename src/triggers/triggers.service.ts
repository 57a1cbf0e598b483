/**
 * The trigger endpoints' logic: the record in MongoDB and its Temporal Schedule kept in
 * step. Order of writes (no transactions): a create writes the record, then the schedule
 * (and removes the record if Temporal refuses); an update changes the schedule first,
 * then the record; a delete removes the schedule, then the record and its runs.
 * `nextRunAt` is always read back from the schedule's description.
 */
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { parseCreateCronJob, parseUpdateCronJob } from '../contracts/schemas/cron-job.schema';
import { checkTriggerTask } from '../sessions/task-checks';
import { InvalidParameterError, NotFoundError, ServiceError } from '../contracts/errors';
import type { Logger } from '../logger';
import { CronJobsRepository } from '../store/cron-jobs.repository';
import { type CronJobRecord } from '../contracts/cron-job-record';
import { PoliciesRepository } from '../store/policies.repository';
import { TriggerRunsRepository, type TriggerRunRecord } from '../store/trigger-runs.repository';
import type { UserRecord } from '../store/users.repository';
import { decodeCursor, parseLimit } from '../contracts/cursor';
import { TriggerSchedules } from './schedules';
import { maskedAuth } from './views';

/** Triggers per user (decisions.md), unless the deployment sets another number. */
export const DEFAULT_MAX_TRIGGERS_PER_USER = 50;
export const RECENT_RUNS = 10;

export const cronJobNotFound = () => new NotFoundError('CRON_JOB_NOT_FOUND', 'Cron job not found');
export const environmentNotFound = () => new NotFoundError('ENVIRONMENT_NOT_FOUND', 'Environment not found');
const policyNotFound = () => new NotFoundError('POLICY_NOT_FOUND', 'Policy not found');
const runNotFound = () => new NotFoundError('RUN_NOT_FOUND', 'Run not found');
const cannot = (verb: 'pause' | 'resume', status: string) => new ServiceError('INVALID_JOB_STATE', `Cannot ${verb} a job with status "${status}"`, { status });

export interface TriggersServiceDeps {
  db: Db;
  temporal: Client;
  /** The shared queue the run workflows (and their sessions) run on. */
  taskQueue: string;
  logger: Logger;
  maxPerUser?: number;
}

export class TriggersService {
  readonly jobs: CronJobsRepository;
  readonly runs: TriggerRunsRepository;
  readonly schedules: TriggerSchedules;
  readonly policies: PoliciesRepository;
  readonly maxPerUser: number;
  private readonly logger: Logger;

  constructor(deps: TriggersServiceDeps) {
    this.jobs = new CronJobsRepository(deps.db);
    this.runs = new TriggerRunsRepository(deps.db);
    this.policies = new PoliciesRepository(deps.db);
    this.schedules = new TriggerSchedules(deps.temporal, deps.taskQueue);
    this.maxPerUser = deps.maxPerUser ?? DEFAULT_MAX_TRIGGERS_PER_USER;
    this.logger = deps.logger.child({ component: 'triggers' });
  }

  async owned(user: UserRecord, id: string): Promise<CronJobRecord> {
    const job = await this.jobs.get(id, user._id);
    if (!job) throw cronJobNotFound();
    return job;
  }

  list(user: UserRecord): Promise<CronJobRecord[]> {
    return this.jobs.list(user._id);
  }

  async create(user: UserRecord, body: unknown): Promise<CronJobRecord> {
    const { fields, status } = parseCreateCronJob(body);
    await checkTriggerTask(fields);
    if (!(await this.jobs.environmentExists(fields.environmentId, user._id))) throw environmentNotFound();
    if (fields.policyId && !(await this.policies.get(fields.policyId, user._id))) throw policyNotFound();
    const job = await this.jobs.create(user._id, fields, status, this.maxPerUser);
    if (!job) throw new ServiceError('CRON_JOB_LIMIT_REACHED', `Maximum of ${this.maxPerUser} cron jobs per user`, { limit: this.maxPerUser });
    try {
      await this.schedules.create(job);
    } catch (err) {
      await this.jobs.remove(job._id, user._id);
      throw scheduleRefused(err, job);
    }
    const created = await this.refreshNextRun(job);
    if (created.status === 'active' && created.scheduleType === 'at' && !created.nextRunAt) {
      // The time passed while the schedule was made: it would never run.
      await this.schedules.delete(job._id);
      await this.jobs.remove(job._id, user._id);
      throw new InvalidParameterError('scheduleAt', job.scheduleAt?.toISOString() ?? null, 'scheduleAt must be in the future');
    }
    this.logger.info({ triggerId: job._id, userId: user._id, scheduleType: job.scheduleType }, 'trigger created');
    return created;
  }

  /**
   * The trigger as it is now: a stored nextRunAt that has passed (its run could not start,
   * say, while no worker was up) is read again from the schedule's description.
   */
  async current(job: CronJobRecord, now = Date.now()): Promise<CronJobRecord> {
    if (job.status !== 'active' || !job.nextRunAt || job.nextRunAt.getTime() > now) return job;
    try {
      return await this.refreshNextRun(job);
    } catch (err) {
      this.logger.warn({ triggerId: job._id, err: String(err) }, 'nextRunAt not refreshed');
      return job;
    }
  }

  async update(user: UserRecord, id: string, body: unknown): Promise<CronJobRecord> {
    const current = await this.owned(user, id);
    const change = parseUpdateCronJob(body, current);
    // A webhook sent back as a view shows it (auth masked) keeps the stored auth.
    const sentAuth = change.fields.webhook?.auth;
    if (sentAuth !== undefined && current.webhook?.auth && sentAuth === maskedAuth(current.webhook.auth)) change.fields.webhook = { ...change.fields.webhook!, auth: current.webhook.auth };
    await checkTriggerTask(change.fields);
    if (change.fields.environmentId !== undefined && !(await this.jobs.environmentExists(change.fields.environmentId, user._id))) throw environmentNotFound();
    if (change.fields.policyId && !(await this.policies.get(change.fields.policyId, user._id))) throw policyNotFound();
    if (change.scheduleChanged || change.retryChanged) {
      const next = { ...current, ...change.fields };
      await this.onSchedule(next, () => this.schedules.update(next)).catch((err) => {
        throw scheduleRefused(err, next);
      });
    }
    let job = await this.jobs.update(id, user._id, change.fields);
    if (!job) throw cronJobNotFound();
    if (change.status && change.status !== job.status) job = change.status === 'paused' ? await this.pause(user, id) : await this.resume(user, id);
    else if (change.scheduleChanged) job = await this.refreshNextRun(job);
    return job;
  }

  async remove(user: UserRecord, id: string): Promise<void> {
    const job = await this.owned(user, id);
    await this.schedules.delete(job._id);
    if (!(await this.jobs.remove(job._id, user._id))) throw cronJobNotFound();
    const runs = await this.runs.deleteForJob(job._id);
    this.logger.info({ triggerId: job._id, runs }, 'trigger deleted');
  }

  async pause(user: UserRecord, id: string): Promise<CronJobRecord> {
    const current = await this.owned(user, id);
    if (current.status !== 'active') throw cannot('pause', current.status);
    const job = await this.jobs.transition(id, user._id, 'active', 'paused', { pausedBy: 'user', nextRunAt: null });
    if (!job) throw cannot('pause', (await this.owned(user, id)).status);
    try {
      await this.onSchedule(job, () => this.schedules.pause(id, 'Paused by the owner'));
    } catch (err) {
      await this.jobs.transition(id, user._id, 'paused', 'active', { pausedBy: null, nextRunAt: current.nextRunAt });
      throw err;
    }
    return job;
  }

  async resume(user: UserRecord, id: string): Promise<CronJobRecord> {
    const current = await this.owned(user, id);
    if (current.status !== 'paused') throw cannot('resume', current.status);
    const job = await this.jobs.transition(id, user._id, 'paused', 'active', { pausedBy: null, consecutiveFailures: 0 });
    if (!job) throw cannot('resume', (await this.owned(user, id)).status);
    try {
      await this.onSchedule(job, () => this.schedules.unpause(id, 'Resumed by the owner'));
    } catch (err) {
      await this.jobs.transition(id, user._id, 'active', 'paused', { pausedBy: current.pausedBy, consecutiveFailures: current.consecutiveFailures });
      throw err;
    }
    return this.refreshNextRun(job);
  }

  /** A run now, in the background; nextRunAt stays as it was. */
  async trigger(user: UserRecord, id: string): Promise<void> {
    const job = await this.owned(user, id);
    await this.onSchedule(job, () => this.schedules.trigger(id));
    this.logger.info({ triggerId: id }, 'trigger run requested');
  }

  async recentRuns(job: CronJobRecord): Promise<TriggerRunRecord[]> {
    return this.runs.recent(job._id, RECENT_RUNS);
  }

  async runPage(user: UserRecord, id: string, query: { limit?: unknown; cursor?: unknown }): Promise<{ runs: TriggerRunRecord[]; nextCursor: string | null }> {
    // Another user's trigger is a 404 whatever the query says.
    const job = await this.owned(user, id);
    const limit = parseLimit(query.limit);
    if (query.cursor !== undefined && typeof query.cursor !== 'string') throw new InvalidParameterError('cursor', query.cursor, 'cursor must be a string');
    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    return this.runs.page(job._id, { limit, after });
  }

  async run(user: UserRecord, id: string, runId: string): Promise<TriggerRunRecord> {
    const job = await this.owned(user, id);
    const run = await this.runs.get(job._id, runId);
    if (!run) throw runNotFound();
    return run;
  }

  /** Reads nextRunAt back from the schedule (null while paused) and stores it. */
  private async refreshNextRun(job: CronJobRecord): Promise<CronJobRecord> {
    const nextRunAt = job.status === 'paused' ? null : await this.schedules.nextRunAt(job._id);
    await this.jobs.setNextRunAt(job._id, nextRunAt);
    return { ...job, nextRunAt };
  }

  /** Runs a schedule operation; a schedule that went missing (Temporal's data lost) is created again first. */
  private async onSchedule(job: CronJobRecord, op: () => Promise<void>): Promise<void> {
    try {
      await op();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
      this.logger.warn({ triggerId: job._id }, 'schedule was missing; creating it again');
      await this.schedules.create(job);
      await op();
    }
  }
}

/** Temporal refusing a spec (INVALID_ARGUMENT arrives as a TypeError) is the user's 400. */
function scheduleRefused(err: unknown, job: CronJobRecord): unknown {
  if (!(err instanceof TypeError)) return err;
  const parameter = job.scheduleType === 'cron' ? 'scheduleCron' : job.scheduleType === 'every' ? 'scheduleInterval' : 'scheduleAt';
  const value = job.scheduleType === 'cron' ? job.scheduleCron : job.scheduleType === 'every' ? job.scheduleInterval : job.scheduleAt?.toISOString();
  return new InvalidParameterError(parameter, value, `The schedule was refused: ${err.message}`);
}
