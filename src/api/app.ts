import type { Registry } from 'prom-client';
import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { Store } from '../store/store';
import type { WorkerRegistry } from '../store/worker-registry';
import { requireApiKey } from './middleware/auth';
import { errorHandler, methodGuard, notFoundHandler, type RouteEntry } from './middleware/errors';
import { rateLimit } from './middleware/rate-limit';
import { healthRoutes } from './routes/health.routes';
import { sessionsRoutes } from './routes/sessions.routes';
import { tasksRoutes } from './routes/tasks.routes';
import { recordingsRoutes } from './routes/recordings.routes';
import { chatRoutes } from './routes/chat.routes';
import { Watchers } from '../environments/reach-out';
import { cronJobsRoutes } from './routes/cron-jobs.routes';
import { webhooksRoutes } from './routes/webhooks.routes';
import { payloadKey } from '../temporal/connection';
import { createLiveRoutes, type LiveRoutes } from './live/live.routes';
import { environmentsRoutes } from './routes/environments.routes';
import { filesRoutes } from './routes/files.routes';
import { policiesRoutes } from './routes/policies.routes';
import { profilesRoutes } from './routes/profiles.routes';
import { createMessageHandler, type MessageHandler } from './messages.handler';
import { currentUser } from './middleware/auth';
import { SessionsService } from '../sessions/sessions.service';
import { socketCounts } from './socket/socket.server';
import type { Server as SocketServer } from 'socket.io';
import { useSubmissionAllowlist } from '../contracts/submitted-urls';
import { openAiErrorHandler, openAiRoutes } from './routes/openai.routes';
import { docsRoutes } from './routes/docs.routes';
import { mcpRoutes, type McpRouter } from './routes/mcp.routes';
import { apiMetrics } from '../metrics/api-metrics';
import { metricsRoute } from '../metrics/http';

export interface AppDeps {
  config: Config;
  logger: Logger;
  store: Store;
  temporal: Client;
  redis: Redis;
  registry: WorkerRegistry;
  /** A worker running in the same process (ROLE=all): its figures are served with the API's at /metrics. */
  inProcessWorker?: { registry: Registry; temporalUrl?: string };
}

/** Filled in once the Socket.IO server is attached to the HTTP server. */
export interface LiveChannel {
  io?: SocketServer;
}

/** POST paths whose JSON body is read in their route, after the API key and the rate limit. */
const LIMITED_BODIES = new Set(['/start/start-session', '/start/run-task', '/start/send-message', '/v1/chat/completions']);

export function createApp(deps: AppDeps, live: LiveChannel = {}): { app: Express; sessions: SessionsService; messages: MessageHandler; liveRoutes: LiveRoutes; mcp: McpRouter } {
  const { config, store, redis } = deps;
  const logger = deps.logger.child({ component: 'api' });
  // A startingUrl or webhook url naming a private address the operator did not open is a 400.
  useSubmissionAllowlist(config.PRIVATE_NETWORK_ALLOWLIST);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  app.use(apiMetrics.middleware());
  app.use(methodGuard(() => routeTable(app)));
  const sessions = new SessionsService({ ...deps, logger });
  // Chat replies (reach-out) are verified over the raw body: before the JSON parser.
  app.use(chatRoutes({ store, sessions, secretKey: payloadKey(config), logger: deps.logger }));
  // The rate-limited calls read their body after the API key and the limit (every request
  // counts, a malformed or oversized one too, and one without a key is a 401 whatever it
  // sends); every other route has it read here.
  const json = express.json({ limit: config.BODY_LIMIT });
  app.use((req, res, next) => (req.method === 'POST' && LIMITED_BODIES.has(req.path.toLowerCase().replace(/\/+$/, '')) ? next() : json(req, res, next)));
  // Malformed JSON sent to /v1 is answered in the OpenAI error shape (see openai.routes.ts).
  app.use('/v1', openAiErrorHandler(logger));

  const messages = createMessageHandler({ config, sessions });
  const auth = requireApiKey({ store, logger });
  const perUser = rateLimit({ redis, name: 'start', limit: config.RATE_LIMIT_PER_MINUTE, windowMs: 60_000, key: (req) => req.user?._id ?? req.ip ?? 'unknown' });

  app.use(healthRoutes(deps));
  // Aggregate figures only (no user's data); behind METRICS_TOKEN when set. No rate limit: Prometheus scrapes it.
  app.get('/metrics', metricsRoute(apiMetrics.registry, config.METRICS_TOKEN, deps.inProcessWorker));
  app.use(tasksRoutes({ config, sessions, watchers: new Watchers(redis) }));
  const perMinute = (limit: number) => ({ limit, windowMs: 60_000 });
  app.use(recordingsRoutes({ config, store, auth, redis, rateLimit: perMinute(config.RECORDINGS_RATE_LIMIT_PER_MINUTE) }));
  app.use(sessionsRoutes({ config, sessions, messages, auth, limit: perUser, body: json }));
  // The live view and WHEP open with the session's view token, not an API key.
  const liveRoutes = createLiveRoutes({ config, store, redis, sessions, logger: deps.logger });
  app.use(liveRoutes.router);
  const uploads = rateLimit({ redis, name: 'uploads', limit: config.UPLOAD_RATE_LIMIT_PER_MINUTE, windowMs: 60_000, key: (req) => req.user?._id ?? req.ip ?? 'unknown' });
  const storage = { config, store, blobs: store.blobs, quota: store.quota, redis, auth, limit: perUser, uploadLimit: uploads, secretKey: payloadKey(config), logger: deps.logger, profilesRateLimit: { limit: config.PROFILES_RATE_LIMIT_PER_15_MINUTES, windowMs: 15 * 60_000 } };
  app.use(environmentsRoutes(storage));
  app.use(profilesRoutes(storage));
  app.use(filesRoutes(storage));
  app.use(cronJobsRoutes({ config, store, temporal: deps.temporal, redis, auth, logger, rateLimit: perMinute(config.CRON_JOBS_RATE_LIMIT_PER_MINUTE) }));
  app.use(webhooksRoutes({ store, redis, auth, logger, rateLimit: perMinute(config.WEBHOOKS_RATE_LIMIT_PER_MINUTE) }));
  app.use(policiesRoutes({ config, store, redis, auth, logger, rateLimit: perMinute(config.POLICIES_RATE_LIMIT_PER_MINUTE) }));
  app.use(openAiRoutes({ config, store, redis, sessions, auth, logger, body: json }));
  app.use(docsRoutes({ config }));
  const mcp = mcpRoutes({ config, store, sessions, logger, auth, limit: { redis, limit: config.RATE_LIMIT_PER_MINUTE, windowMs: 60_000 } });
  app.use(mcp);
  // No rate limit: clients poll it to see who watches.
  app.get('/start/active-sockets', auth, async (req, res) => {
    const ids = await store.sessions.liveIds(currentUser(req)._id);
    res.json({ success: true, sessions: live.io ? await socketCounts(live.io, ids) : ids.map((sessionId) => ({ sessionId, sockets: 0 })) });
  });

  app.use(notFoundHandler());
  app.use(errorHandler(logger));
  return { app, sessions, messages, liveRoutes, mcp };
}

/** Paths and methods the app serves, read from Express's router, to tell 405 from 404. */
function routeTable(app: Express): RouteEntry[] {
  const out: RouteEntry[] = [];
  const walk = (stack: any[]) => {
    for (const layer of stack) {
      if (layer.route) {
        const path = String(layer.route.path);
        const pattern = new RegExp(`^${path.replace(/:[^/]+/g, '[^/]+')}/?$`);
        const literals = path.split('/').filter((segment) => segment && !segment.startsWith(':')).length;
        for (const m of Object.keys(layer.route.methods)) if (m !== '_all') out.push({ method: m.toUpperCase(), pattern, literals });
      } else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as any).router.stack);
  return out;
}
