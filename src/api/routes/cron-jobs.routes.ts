import { Router, type RequestHandler } from 'express';
import type { Client } from '@temporalio/client';
import type { Redis } from 'ioredis';
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { TriggersService } from '../../triggers/triggers.service';
import { cronJobView, runView } from '../../triggers/views';
import { currentUser } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { send } from '../respond';
import * as R from '../../contracts/schemas/responses.schema';

/** decisions.md: 60 requests per minute per user on /cron-jobs. */
export const CRON_JOBS_RATE_LIMIT = { limit: 60, windowMs: 60_000 } as const;

export interface CronJobsRoutesDeps {
  config: Config;
  store: { db: Db };
  temporal: Client;
  redis: Redis;
  /** The API key middleware. */
  auth: RequestHandler;
  logger: Logger;
  /** Triggers per user; 50 by default. */
  maxTriggersPerUser?: number;
  rateLimit?: { limit: number; windowMs: number };
}

/**
 * /cron-jobs: scheduled triggers, each a Temporal Schedule. Another user's trigger or
 * environment is a 404.
 */
export function cronJobsRoutes(deps: CronJobsRoutesDeps): Router {
  const triggers = new TriggersService({ db: deps.store.db, temporal: deps.temporal, taskQueue: deps.config.TEMPORAL_TASK_QUEUE, logger: deps.logger, maxPerUser: deps.maxTriggersPerUser ?? deps.config.MAX_TRIGGERS_PER_USER });
  const limits = deps.rateLimit ?? CRON_JOBS_RATE_LIMIT;
  const limit = rateLimit({ redis: deps.redis, name: 'cron-jobs', limit: limits.limit, windowMs: limits.windowMs, key: (req) => req.user?._id ?? req.ip ?? 'unknown' });
  const router = Router();
  router.use('/cron-jobs', deps.auth, limit);

  router.get('/cron-jobs', async (req, res) => {
    const jobs = await Promise.all((await triggers.list(currentUser(req))).map((j) => triggers.current(j)));
    send(res, R.cronJobListSchema, 200, { success: true, cronJobs: jobs.map(cronJobView) });
  });

  router.post('/cron-jobs', async (req, res) => {
    const job = await triggers.create(currentUser(req), req.body ?? {});
    send(res, R.cronJobOneSchema, 201, { success: true, cronJob: cronJobView(job) });
  });

  router.get('/cron-jobs/:id', async (req, res) => {
    const job = await triggers.current(await triggers.owned(currentUser(req), req.params.id));
    const recentRuns = await triggers.recentRuns(job);
    send(res, R.cronJobWithRunsSchema, 200, { success: true, cronJob: cronJobView(job), recentRuns: recentRuns.map(runView) });
  });

  router.put('/cron-jobs/:id', async (req, res) => {
    const job = await triggers.update(currentUser(req), req.params.id, req.body ?? {});
    send(res, R.cronJobOneSchema, 200, { success: true, cronJob: cronJobView(job) });
  });

  router.delete('/cron-jobs/:id', async (req, res) => {
    await triggers.remove(currentUser(req), req.params.id);
    send(res, R.confirmationSchema, 200, { success: true, message: 'Cron job deleted' });
  });

  router.post('/cron-jobs/:id/pause', async (req, res) => {
    const job = await triggers.pause(currentUser(req), req.params.id);
    send(res, R.cronJobStateSchema, 200, { success: true, cronJob: { _id: job._id, status: job.status } });
  });

  router.post('/cron-jobs/:id/resume', async (req, res) => {
    const job = await triggers.resume(currentUser(req), req.params.id);
    send(res, R.cronJobStateSchema, 200, { success: true, cronJob: { _id: job._id, status: job.status, consecutiveFailures: job.consecutiveFailures, nextRunAt: job.nextRunAt ? job.nextRunAt.toISOString() : null } });
  });

  router.post('/cron-jobs/:id/trigger', async (req, res) => {
    await triggers.trigger(currentUser(req), req.params.id);
    send(res, R.confirmationSchema, 200, { success: true, message: 'Cron job triggered; it runs in the background' });
  });

  router.get('/cron-jobs/:id/runs', async (req, res) => {
    const page = await triggers.runPage(currentUser(req), req.params.id, { limit: req.query.limit, cursor: req.query.cursor });
    send(res, R.runPageSchema, 200, { success: true, runs: page.runs.map(runView), nextCursor: page.nextCursor });
  });

  router.get('/cron-jobs/:id/runs/:runId', async (req, res) => {
    const run = await triggers.run(currentUser(req), req.params.id, req.params.runId);
    send(res, R.runOneSchema, 200, { success: true, run: runView(run) });
  });

  return router;
}
