import { Router, type RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../../config';
import { NotFoundError, ServiceError } from '../../contracts/errors';
import type { Logger } from '../../logger';
import { CronJobsRepository } from '../../store/cron-jobs.repository';
import type { PolicyRecord } from '../../contracts/policy-rules';
import type { Store } from '../../store/store';
import { currentUser } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { parseCreatePolicy, parseUpdatePolicy } from '../../contracts/schemas/policy.schema';
import { send } from '../respond';
import * as R from '../../contracts/schemas/responses.schema';

/** Same budget as /cron-jobs: 60 requests a minute per user. */
export const POLICIES_RATE_LIMIT = { limit: 60, windowMs: 60_000 } as const;

export const policyNotFound = () => new NotFoundError('POLICY_NOT_FOUND', 'Policy not found');

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function policyView(p: PolicyRecord) {
  return {
    _id: p._id,
    userId: p.userId,
    name: p.name,
    description: p.description,
    llmRole: p.llmRole,
    domainRules: p.domainRules,
    rules: p.rules,
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

/**
 * /policies: automation policies a session, a task run or a trigger names with `policyId`.
 * Another user's policy is a 404; a policy a trigger still names cannot be deleted (409).
 */
export function policiesRoutes(deps: { config: Config; store: Pick<Store, 'db' | 'policies'>; redis: Redis; auth: RequestHandler; logger: Logger; rateLimit?: { limit: number; windowMs: number } }): Router {
  const { config, store } = deps;
  const policies = store.policies;
  const jobs = new CronJobsRepository(store.db);
  const logger = deps.logger.child({ component: 'policies' });
  const router = Router();
  const limits = deps.rateLimit ?? POLICIES_RATE_LIMIT;
  const limit = rateLimit({ redis: deps.redis, name: 'policies', limit: limits.limit, windowMs: limits.windowMs, key: (req) => req.user?._id ?? req.ip ?? 'unknown' });
  router.use('/policies', deps.auth, limit);

  router.get('/policies', async (req, res) => {
    send(res, R.policyListSchema, 200, { success: true, policies: (await policies.list(currentUser(req)._id)).map(policyView) });
  });

  router.post('/policies', async (req, res) => {
    const fields = parseCreatePolicy(req.body, config.MAX_POLICY_RULES);
    const user = currentUser(req);
    const p = await policies.create(user._id, fields, config.MAX_POLICIES_PER_USER);
    if (!p) throw new ServiceError('POLICY_LIMIT_REACHED', `Maximum of ${config.MAX_POLICIES_PER_USER} policies per user`, { limit: config.MAX_POLICIES_PER_USER });
    logger.info({ userId: user._id, policyId: p._id, rules: p.rules.length }, 'policy created');
    send(res, R.policyOneSchema, 201, { success: true, policy: policyView(p) });
  });

  router.get('/policies/:id', async (req, res) => {
    const p = await policies.get(req.params.id, currentUser(req)._id);
    if (!p) throw policyNotFound();
    send(res, R.policyOneSchema, 200, { success: true, policy: policyView(p) });
  });

  router.put('/policies/:id', async (req, res) => {
    const user = currentUser(req);
    if (!(await policies.get(req.params.id, user._id))) throw policyNotFound();
    const fields = parseUpdatePolicy(req.body, config.MAX_POLICY_RULES);
    const p = await policies.update(req.params.id, user._id, fields);
    if (!p) throw policyNotFound();
    send(res, R.policyOneSchema, 200, { success: true, policy: policyView(p) });
  });

  router.delete('/policies/:id', async (req, res) => {
    const user = currentUser(req);
    if (!(await policies.get(req.params.id, user._id))) throw policyNotFound();
    const users = (await jobs.list(user._id)).filter((j) => j.policyId === req.params.id).map((j) => j._id);
    if (users.length) {
      throw new ServiceError('POLICY_IN_USE', `The policy is used by ${users.length} cron job(s); give them another policy or none first`, { cronJobIds: users });
    }
    if (!(await policies.remove(req.params.id, user._id))) throw policyNotFound();
    send(res, R.confirmationSchema, 200, { success: true, message: 'Policy deleted' });
  });

  return router;
}
