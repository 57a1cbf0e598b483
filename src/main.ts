/**
 * The service's entry point. ROLE=api runs the HTTP API, ROLE=worker a browser worker
 * (which also runs session workflows), ROLE=workflows session workflows without a
 * browser, ROLE=all (the embedded default) API and browser worker in one process,
 * ROLE=model the local model server (LLM_PROVIDER=local).
 * SIGTERM/SIGINT drain and exit.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import type { MongoClient } from 'mongodb';
import { startSessionSweeper } from './api/session-sweeper';
import { startApiServer, type RunningApi } from './api/server';
import { EventPublisher } from './events/publisher';
import { loadConfigOrExit, type Config } from './config';
import { createLogger, type Logger } from './logger';
import { connectMongo } from './store/mongo';
import { runStorageSweep } from './store/files.repository';
import { runRetentionSweep } from './store/retention';
import { createStore, type Store } from './store/store';
import { connectTemporal, payloadKey } from './temporal/connection';
import { startBrowserWorker, startWorkflowWorker } from './workers/browser-worker';
import { WorkerRegistry } from './store/worker-registry';
import { startMetricsServer } from './metrics/http';
import { temporalMetricsAddress } from './metrics/temporal';
import { workerMetrics } from './metrics/worker-metrics';
import { runModelRole } from './model/model-role';

const DAY_MS = 24 * 60 * 60 * 1000;

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL);
  logger.info({ role: config.ROLE }, 'starting');
  if (config.ROLE === 'model') return runModelRole(config, logger);

  const { mongo, store, redis } = await connectStorage(config);
  const roles = await startRoles(config, logger, store, redis);
  const sweepers = startSweeps(store, logger, config);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    for (const sweeper of sweepers) clearInterval(sweeper);
    const since = Date.now();
    await stopRoles(roles);
    const rolesMs = Date.now() - since;
    redis.disconnect();
    await mongo.close();
    logger.info({ ms: { roles: rolesMs, storage: Date.now() - since - rolesMs } }, 'stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // "ready" only once SIGTERM drains: a supervisor that stops the process as soon as it reads the line must not kill it mid-start.
  process.stdout.write(
    JSON.stringify({ msg: 'ready', role: config.ROLE, api: roles.api ? config.PUBLIC_BASE_URL : undefined, workerId: roles.worker?.workerId }) + '\n',
  );
}

/** MongoDB (and the store over it) and Redis, connected; either one unreachable fails the start with a clear message. */
async function connectStorage(config: Config): Promise<{ mongo: MongoClient; store: Store; redis: Redis }> {
  const { client: mongo, db } = await connectMongo(config.MONGODB_URL).catch((err) => {
    throw new Error(`MongoDB is not reachable at MONGODB_URL: ${(err as Error).message}`);
  });
  const store = createStore(db, {
    uploadTtlMs: config.FILE_UPLOAD_TTL_MS,
    downloadTtlMs: config.DOWNLOAD_TTL_MS,
    storageMaxBytes: config.USER_STORAGE_MAX_BYTES,
    blobDir: config.BLOB_STORE === 'files' ? (config.BLOB_DIR ?? path.join(config.DATA_DIR, 'blobs')) : undefined,
    sealingKey: payloadKey(config),
  });
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 3, lazyConnect: true });
  await redis.connect().catch((err) => {
    throw new Error(`Redis is not reachable at REDIS_URL: ${(err as Error).message}`);
  });
  return { mongo, store, redis };
}

/** What the process's roles started, each stopped in turn on SIGTERM. */
interface RunningRoles {
  worker?: { workerId?: string; shutdown(): Promise<void> };
  metrics?: { close(): Promise<void> };
  api?: RunningApi;
  temporalConnection?: { close(): Promise<void> };
  sessionSweeper?: { stop(): Promise<void> };
}

/** Starts what ROLE asks for: a browser or workflow worker (with its metrics server), the API, or both. */
async function startRoles(config: Config, logger: Logger, store: Store, redis: Redis): Promise<RunningRoles> {
  const registry = new WorkerRegistry(redis, config.WORKER_TTL_MS);
  let worker: RunningRoles['worker'];
  if (config.ROLE === 'all' || config.ROLE === 'worker') worker = await startBrowserWorker({ config, logger, store, redis });
  if (config.ROLE === 'workflows') worker = await startWorkflowWorker({ config, logger, store, redis });
  // A worker's own metrics (and the Temporal SDK's) on METRICS_PORT; the API serves its own at /metrics.
  const metrics = worker && config.METRICS_PORT ? await startMetricsServer({ registry: workerMetrics.registry, host: config.HOST, port: config.METRICS_PORT, token: config.METRICS_TOKEN, temporalUrl: `http://${temporalMetricsAddress(config)}/metrics`, logger }) : undefined;
  if (config.ROLE !== 'all' && config.ROLE !== 'api') return { worker, metrics };
  const { connection, client } = await connectTemporal(config);
  const temporalMetrics = temporalMetricsAddress(config);
  const inProcessWorker = worker ? { registry: workerMetrics.registry, temporalUrl: temporalMetrics ? `http://${temporalMetrics}/metrics` : undefined } : undefined;
  const api = await startApiServer({ config, logger, store, temporal: client, redis, registry, inProcessWorker });
  // Slots and profile locks of session workflows that are gone (terminated, crashed) are given back.
  const sessionSweeper = startSessionSweeper({ temporal: client, store, events: new EventPublisher(redis, store.events, logger), logger }, config.SESSION_SWEEP_INTERVAL_MS);
  return { worker, metrics, api, temporalConnection: connection, sessionSweeper };
}

/** Expired uploads, uploads whose process died, timeline events past their hour: swept by every process (each step is idempotent). */
function startSweeps(store: Store, logger: Logger, config: Config): NodeJS.Timeout[] {
  const sweep = () =>
    Promise.all([runStorageSweep(store, { orphansBefore: new Date(Date.now() - 24 * 60 * 60 * 1000) }), store.events.sweep(new Date())]).catch((err) =>
      logger.warn({ err }, 'sweep failed'),
    );
  const sweepers = [setInterval(sweep, 60_000)];
  if (config.RECORDS_RETENTION_DAYS > 0) sweepers.push(startRetentionSweep(store, logger, config.RECORDS_RETENTION_DAYS * DAY_MS, config.RECORDS_SWEEP_INTERVAL_MS));
  for (const sweeper of sweepers) sweeper.unref();
  return sweepers;
}

/** Deletes the records of sessions ended more than `retentionMs` ago, a bounded batch per pass; passes never overlap. */
function startRetentionSweep(store: Store, logger: Logger, retentionMs: number, intervalMs: number): NodeJS.Timeout {
  let running = false;
  return setInterval(() => {
    if (running) return;
    running = true;
    runRetentionSweep(store, new Date(Date.now() - retentionMs))
      .then((gone) => gone.sessions + gone.triggerRuns > 0 && logger.info({ gone }, 'records past their retention deleted'))
      .catch((err) => logger.warn({ err }, 'retention sweep failed'))
      .finally(() => (running = false));
  }, intervalMs);
}

/** Drains what the roles started: the session sweeper, the API, the worker, the metrics server, then Temporal's connection. */
async function stopRoles(roles: RunningRoles): Promise<void> {
  await roles.sessionSweeper?.stop();
  await roles.api?.shutdown();
  await roles.worker?.shutdown();
  await roles.metrics?.close();
  await roles.temporalConnection?.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
