/**
 * The service's entry point. ROLE=api runs the HTTP API, ROLE=worker a browser worker
 * (which also runs session workflows), ROLE=workflows session workflows without a
 * browser, ROLE=all (the embedded default) API and browser worker in one process,
 * ROLE=model the local model server (LLM_PROVIDER=local).
 * SIGTERM/SIGINT drain and exit.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { startSessionSweeper } from './api/session-sweeper';
import { startApiServer, type RunningApi } from './api/server';
import { EventPublisher } from './events/publisher';
import { loadConfigOrExit } from './config';
import { createLogger } from './logger';
import { connectMongo } from './store/mongo';
import { runStorageSweep } from './store/files.repository';
import { createStore } from './store/store';
import { connectTemporal, payloadKey } from './temporal/connection';
import { startBrowserWorker, startWorkflowWorker } from './workers/browser-worker';
import { WorkerRegistry } from './store/worker-registry';
import { startMetricsServer } from './metrics/http';
import { temporalMetricsAddress } from './metrics/temporal';
import { workerMetrics } from './metrics/worker-metrics';
import { runModelRole } from './model/model-role';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL);
  logger.info({ role: config.ROLE }, 'starting');
  if (config.ROLE === 'model') return runModelRole(config, logger);

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
  const registry = new WorkerRegistry(redis, config.WORKER_TTL_MS);

  let worker: { workerId?: string; shutdown(): Promise<void> } | undefined;
  let api: RunningApi | undefined;
  let temporalConnection: { close(): Promise<void> } | undefined;
  let sessionSweeper: { stop(): Promise<void> } | undefined;
  if (config.ROLE === 'all' || config.ROLE === 'worker') worker = await startBrowserWorker({ config, logger, store, redis });
  if (config.ROLE === 'workflows') worker = await startWorkflowWorker({ config, logger, store, redis });
  // A worker's own metrics (and the Temporal SDK's) on METRICS_PORT; the API serves its own at /metrics.
  const metrics = worker && config.METRICS_PORT ? await startMetricsServer({ registry: workerMetrics.registry, host: config.HOST, port: config.METRICS_PORT, token: config.METRICS_TOKEN, temporalUrl: `http://${temporalMetricsAddress(config)}/metrics`, logger }) : undefined;
  if (config.ROLE === 'all' || config.ROLE === 'api') {
    const { connection, client } = await connectTemporal(config);
    temporalConnection = connection;
    const temporalMetrics = temporalMetricsAddress(config);
    const inProcessWorker = worker ? { registry: workerMetrics.registry, temporalUrl: temporalMetrics ? `http://${temporalMetrics}/metrics` : undefined } : undefined;
    api = await startApiServer({ config, logger, store, temporal: client, redis, registry, inProcessWorker });
    // Slots and profile locks of session workflows that are gone (terminated, crashed) are given back.
    sessionSweeper = startSessionSweeper({ temporal: client, store, events: new EventPublisher(redis, store.events, logger), logger }, config.SESSION_SWEEP_INTERVAL_MS);
  }
  // Expired uploads, uploads whose process died, timeline events past their hour: swept by every process (each step is idempotent).
  const sweep = () =>
    Promise.all([runStorageSweep(store, { orphansBefore: new Date(Date.now() - 24 * 60 * 60 * 1000) }), store.events.sweep(new Date())]).catch((err) =>
      logger.warn({ err }, 'sweep failed'),
    );
  const sweeper = setInterval(sweep, 60_000);
  sweeper.unref();
  process.stdout.write(
    JSON.stringify({ msg: 'ready', role: config.ROLE, api: api ? config.PUBLIC_BASE_URL : undefined, workerId: worker?.workerId }) + '\n',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    clearInterval(sweeper);
    await sessionSweeper?.stop();
    await api?.shutdown();
    await worker?.shutdown();
    await metrics?.close();
    await temporalConnection?.close();
    redis.disconnect();
    await mongo.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
