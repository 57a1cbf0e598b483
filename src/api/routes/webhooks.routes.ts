import { Router, type RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Db } from 'mongodb';
import type { Logger } from '../../logger';
import { PREVIOUS_SECRET_GRACE_MS, WebhookSecretsRepository, type WebhookSecretRecord } from '../../store/webhook-secrets.repository';
import { currentUser } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { send } from '../respond';
import * as R from '../../contracts/schemas/responses.schema';

export const WEBHOOKS_RATE_LIMIT = { limit: 60, windowMs: 60_000 } as const;

export interface WebhooksRoutesDeps {
  store: { db: Db };
  redis: Redis;
  /** The API key middleware. */
  auth: RequestHandler;
  logger: Logger;
  rateLimit?: { limit: number; windowMs: number };
}

function secretView(record: WebhookSecretRecord, now = Date.now()) {
  // The latest expiry: until then deliveries carry more than one signature.
  const lastExpiry = Math.max(0, ...record.previous.map((p) => p.expiresAt.getTime()));
  return {
    secret: record.secret,
    createdAt: record.createdAt.toISOString(),
    previousSecretExpiresAt: lastExpiry > now ? new Date(lastExpiry).toISOString() : null,
  };
}

/**
 * /webhooks/secret: the caller's Standard Webhooks signing secret (`whsec_...`), created
 * on first use; rotate replaces it and deliveries carry both signatures for 24 hours.
 */
export function webhooksRoutes(deps: WebhooksRoutesDeps): Router {
  const secrets = new WebhookSecretsRepository(deps.store.db);
  const logger = deps.logger.child({ component: 'webhooks' });
  const limits = deps.rateLimit ?? WEBHOOKS_RATE_LIMIT;
  const limit = rateLimit({ redis: deps.redis, name: 'webhooks', limit: limits.limit, windowMs: limits.windowMs, key: (req) => req.user?._id ?? req.ip ?? 'unknown' });
  const router = Router();
  router.use('/webhooks', deps.auth, limit);

  router.get('/webhooks/secret', async (req, res) => {
    const record = await secrets.getOrCreate(currentUser(req)._id);
    send(res, R.webhookSecretSchema, 200, { success: true, ...secretView(record) });
  });

  router.post('/webhooks/secret/rotate', async (req, res) => {
    const user = currentUser(req);
    const record = await secrets.rotate(user._id);
    logger.info({ userId: user._id }, 'webhook secret rotated');
    send(res, R.webhookSecretSchema, 200, {
      success: true,
      message: `Webhook secret rotated; deliveries are signed with the previous secret too for the next ${PREVIOUS_SECRET_GRACE_MS / 3_600_000} hours`,
      ...secretView(record),
    });
  });

  return router;
}
