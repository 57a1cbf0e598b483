import { warmUpModel } from '../agent/warm-up';
import { Recorder } from '../recording/recorder';
import { StepPictures } from '../recording/pictures';
import { CpuGauge } from '../metrics/cpu-gauge';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Redis } from 'ioredis';
import { createBrowserActivities } from '../activities/browser.activities';
import { HeldSessions } from '../held-sessions/held-sessions';
import { createSessionActivities, type LocalBrowserWorker } from '../activities/session.activities';
import { createTriggerActivities } from '../activities/trigger.activities';
import { createWebhookActivities } from '../activities/webhook.activities';
import { NetworkGuard } from '../net/network-guard';
import { TrafficMeter } from '../browser/traffic-meter';
import type { Spending } from '../agent/step-context';
import { Watchers } from '../environments/reach-out';
import { AgentRunner } from '../agent/agent';
import { SecretVault } from '../agent/secrets/vault';
import { createLlmClient } from '../agent/llm/factory';
import { BrowserPool } from '../browser/pool';
import { ProfileDirectories } from '../browser/profiles';
import { StoredFiles } from '../browser/task-files';
import { startScreencaster } from '../browser/screencast';
import type { Config } from '../config';
import { EventPublisher } from '../events/publisher';
import type { Logger } from '../logger';
import type { Store } from '../store/store';
import { dataConverter, payloadKey } from '../temporal/connection';
import { HibernationsRepository } from '../store/hibernations.repository';
import { MasksRepository } from '../store/masks.repository';
import { installTemporalRuntime } from '../temporal/runtime';
import { temporalMetricsAddress } from '../metrics/temporal';
import { workerMetrics } from '../metrics/worker-metrics';
import { WorkerRegistry } from '../store/worker-registry';
import { sessionWorkflowCode } from './workflow-bundle';

export interface RunningBrowserWorker {
  workerId: string;
  taskQueue: string;
  pool: BrowserPool;
  /** Stops taking sessions, lets running activities finish (up to the grace time), closes browsers. */
  shutdown(): Promise<void>;
}

/**
 * How long one workflow activation may run before the SDK takes it for a deadlock. At the
 * SDK's 5 s, an activation that a paused or CPU-starved process resumes late trips the check
 * while the workflow's promises run, and Node then aborts the whole process ("async hook
 * stack has become corrupted", nodejs/node#38503): every session on the worker was lost to a
 * 20 s stall. Session workflows never compute for long without yielding, so the check is
 * kept only for a real endless loop.
 */
export const WORKFLOW_ACTIVATION_LIMIT = '10m' as const;

/** What every worker that runs session workflows polls, and how it runs them (the build's bundle of them when it is current). */
export function sessionWorkflowOptions(config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>) {
  return { taskQueue: config.TEMPORAL_TASK_QUEUE, ...sessionWorkflowCode(), isolateExecutionTimeout: WORKFLOW_ACTIVATION_LIMIT };
}

/**
 * Session workflows and shared activities only, without a browser: for running workflow
 * workers apart from browser workers (ROLE=workflows).
 */
export async function startWorkflowWorker(deps: { config: Config; logger: Logger; store: Store; redis: Redis }): Promise<{ shutdown(): Promise<void> }> {
  const { config, store, redis } = deps;
  const identity = `${os.hostname()}-${process.pid}-workflows`;
  const logger = deps.logger.child({ component: 'workflow-worker' });
  installTemporalRuntime(deps.logger, temporalMetricsAddress(config));
  const registry = new WorkerRegistry(redis, config.WORKER_TTL_MS);
  const events = new EventPublisher(redis, store.events, logger);
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: dataConverter(config),
    identity,
    ...shutdownTimes(config),
    ...sessionWorkflowOptions(config),
    activities: {
      ...createSessionActivities({ config, store, registry, events, logger }),
      ...createTriggerActivities({ config, store, logger }),
      ...createWebhookActivities({ config, store, logger, guard: new NetworkGuard({ allowlist: config.PRIVATE_NETWORK_ALLOWLIST, logger }), watchers: new Watchers(redis) }),
    },
  });
  const running = worker.run();
  running.catch((err) => logger.error({ err }, 'temporal worker stopped with an error'));
  logger.info('workflow worker started');
  return {
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
    },
  };
}

/** What a browser worker holds in its process: its sessions, their browsers and what serves them. */
interface BrowserSide {
  pool: BrowserPool;
  held: HeldSessions;
  recorder: Recorder;
}

/**
 * A browser worker: session workflows and shared activities on the common queue, and the
 * browser activities of the sessions it holds on its own queue (so they stay on this
 * process, next to their Chromium).
 */
export async function startBrowserWorker(deps: { config: Config; logger: Logger; store: Store; redis: Redis }): Promise<RunningBrowserWorker> {
  const { config, redis } = deps;
  const workerId = config.WORKER_ID ?? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const taskQueue = `browser-${workerId}`;
  const logger = deps.logger.child({ component: 'browser-worker', workerId });
  installTemporalRuntime(deps.logger, temporalMetricsAddress(config));
  const registry = new WorkerRegistry(redis, config.WORKER_TTL_MS);
  // One publisher (events of a session keep their order) and one network guard for all of the worker.
  const shared = { events: new EventPublisher(redis, deps.store.events, logger), guard: new NetworkGuard({ allowlist: config.PRIVATE_NETWORK_ALLOWLIST, logger }) };
  const side = browserSide({ ...deps, ...shared, logger });
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const workers = await temporalWorkers({ ...deps, ...shared, logger, registry, connection, side, workerId, taskQueue });

  workerMetrics.watch(side.pool, config.LLM_MODEL);
  await side.pool.warm();
  const screencaster = startScreencaster({ pool: side.pool, redis, logger });
  const beat = () =>
    registry.heartbeat({ workerId, taskQueue, sessions: side.pool.load, capacity: side.pool.capacity, known: side.pool.known(true) }).catch((err) => logger.warn({ err }, 'worker heartbeat failed'));
  await beat();
  const heartbeat = setInterval(beat, config.WORKER_HEARTBEAT_MS);
  const running = Promise.all(workers.map((w) => w.run()));
  running.catch((err) => logger.error({ err }, 'temporal worker stopped with an error'));
  logger.info({ taskQueue }, 'browser worker started');

  let stopping: Promise<void> | undefined;
  const stop = async () => {
    const phases = new PhaseClock();
    clearInterval(heartbeat);
    await registry.remove(workerId).catch(() => undefined);
    // The session workflows go first: what the handover asks of them runs on the other workers at once.
    const [sessionWorker] = workers;
    if (sessionWorker.getState() === 'RUNNING') sessionWorker.shutdown();
    await handOverSessions(side.held, config.SHUTDOWN_GRACE_MS, logger);
    phases.mark('handover');
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    await running.catch(() => undefined);
    phases.mark('temporal');
    // Steps still waiting to be written (up to a second of each task's) are written before the store goes.
    await side.recorder.settleAll();
    await screencaster.stop();
    phases.mark('recorder');
    await side.pool.closeAll();
    phases.mark('browsers');
    await connection.close();
    phases.mark('connection');
    logger.info({ ms: phases.ms }, 'browser worker stopped');
  };
  return { workerId, taskQueue, pool: side.pool, shutdown: () => (stopping ??= stop()) };
}

/**
 * Running steps get the grace time to end; a worker whose drain still has not ended 5 s later
 * (a poll that never returns) is given up on, so the process always exits.
 */
function shutdownTimes(config: Config): { shutdownGraceTime: number; shutdownForceTime: number } {
  return { shutdownGraceTime: config.SHUTDOWN_GRACE_MS, shutdownForceTime: config.SHUTDOWN_GRACE_MS + 5_000 };
}

/** How long each phase of a shutdown took (ms), for the log that says where a slow one waited. */
class PhaseClock {
  readonly ms: Record<string, number> = {};
  private last = Date.now();
  mark(phase: string): void {
    const now = Date.now();
    this.ms[phase] = now - this.last;
    this.last = now;
  }
}

/**
 * The worker stops taking sessions (it left the registry; it places none on itself) and hands
 * over each one it holds, once its running step ended: their workflows move them on at once.
 */
async function handOverSessions(held: HeldSessions, graceMs: number, logger: Logger): Promise<void> {
  const since = Date.now();
  const sessions = await held.handOverAll(graceMs).catch((err) => {
    logger.warn({ err }, 'sessions not all handed over');
    return 0;
  });
  if (sessions) logger.info({ sessions, ms: Date.now() - since }, 'sessions handed over');
}

/** The Temporal workers of a browser worker: session workflows and shared activities, and its own queue's browser activities. */
async function temporalWorkers(deps: {
  config: Config;
  logger: Logger;
  store: Store;
  redis: Redis;
  registry: WorkerRegistry;
  connection: NativeConnection;
  events: EventPublisher;
  guard: NetworkGuard;
  side: BrowserSide;
  workerId: string;
  taskQueue: string;
}): Promise<Worker[]> {
  const { config, store, redis, registry, logger, events, guard, side, workerId, taskQueue } = deps;
  const { pool, held } = side;
  const common = { connection: deps.connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter: dataConverter(config), identity: workerId, ...shutdownTimes(config) };
  const local: LocalBrowserWorker = {
    workerId,
    taskQueue,
    // A worker that is stopping has no room for a new session.
    load: () => ({ sessions: pool.load, capacity: held.draining ? 0 : pool.capacity, known: pool.known() }),
    openReady: (sessionId, userId) => pool.openReady(sessionId, { userId }) !== undefined,
    reserve: (sessionId, ms) => pool.reserve(sessionId, ms),
  };
  const sessionWorker = await Worker.create({
    ...common,
    ...sessionWorkflowOptions(config),
    activities: {
      ...createSessionActivities({ config, store, registry, events, logger, local }),
      ...createTriggerActivities({ config, store, logger }),
      ...createWebhookActivities({ config, store, logger, guard, watchers: new Watchers(redis) }),
    },
  });
  const browserWorker = await Worker.create({
    ...common,
    taskQueue,
    activities: createBrowserActivities(held),
    maxConcurrentActivityTaskExecutions: Math.max(20, config.BROWSER_MAX_SESSIONS * 4),
    // A stop or pause must reach a running step within a second.
    defaultHeartbeatThrottleInterval: 200,
    maxHeartbeatThrottleInterval: 500,
  });
  return [sessionWorker, browserWorker];
}

/** The sessions this worker holds, their browsers, the agent that works in them and what it records. */
function browserSide(deps: { config: Config; logger: Logger; store: Store; events: EventPublisher; guard: NetworkGuard }): BrowserSide {
  const { config, store, events, guard, logger } = deps;
  const vault = new SecretVault(new MasksRepository(store.db, payloadKey(config)), (sessionId, err) => logger.warn({ sessionId, err: String(err) }, 'masked values not stored; they stay masked on this worker'));
  // Spending is charged as it happens (each step, metered traffic as it flows), so every running task of a user sees what the others spent.
  const spending: Spending = {
    left: (userId, taskId) => store.users.spendingLeft(userId, taskId),
    charge: (userId, usd, taskId) => store.users.chargeSpent(userId, usd, taskId),
  };
  const meter = new TrafficMeter(spending.charge, logger);
  const storedFiles = new StoredFiles({ files: store.files, blobs: store.blobs, quota: store.quota, dataDir: config.DATA_DIR, maxDownloadBytes: config.FILE_MAX_BYTES });
  const pool = browserPool(config, logger, { guard, meter, vault, storedFiles });
  const recorder = stepRecorder(config, logger, store, pool);
  const llm = createLlmClient(config);
  if (llm.followsSchemas) void warmUpModel(llm, logger);
  const agent = new AgentRunner(pool, {
    files: storedFiles,
    recorder,
    recordings: store.recordings,
    llm,
    prices: config.LLM_PRICES,
    observationTokenBudget: config.OBSERVATION_TOKEN_BUDGET,
    contextTokens: config.LLM_CONTEXT_TOKENS,
    navigationTimeoutMs: config.NAVIGATION_TIMEOUT_MS,
    vision: config.LLM_VISION,
    policies: store.policies,
    spending,
    vault,
    onEvent: (sessionId, message) => {
      events.message(sessionId, message).catch((err) => logger.warn({ err, sessionId }, 'event publish failed'));
    },
  });
  const profiles = profileDirectories(config, logger, store);
  const hibernations = new HibernationsRepository(store.db, payloadKey(config));
  const held = new HeldSessions({ pool, agent, events, store, profiles, spending, meter, onClosed: (id) => storedFiles.discard(id), vault, recorder, hibernations, leaseHandoverMs: config.LEASE_HANDOVER_MS, logger });
  return { pool, held, recorder };
}

/** The worker's Chromium and its sessions' contexts; downloads are stored as their session's user's files, masked. */
function browserPool(config: Config, logger: Logger, deps: { guard: NetworkGuard; meter: TrafficMeter; vault: SecretVault; storedFiles: StoredFiles }): BrowserPool {
  const { guard, meter, vault, storedFiles } = deps;
  // The download sink asks the pool whose session a download belongs to (called only later).
  const persistDownload = storedFiles.persistDownload((sessionId) => pool.get(sessionId)?.userId);
  const pool: BrowserPool = new BrowserPool(
    {
      executablePath: config.CHROMIUM_PATH,
      headless: config.CHROMIUM_HEADLESS,
      capacity: config.BROWSER_MAX_SESSIONS,
      ready: config.BROWSER_READY_CONTEXTS,
      guard,
      meter,
      sandbox: config.CHROMIUM_SANDBOX,
      maxNetworkEntries: config.NETWORK_CAPTURE_MAX,
      maxDownloadBytes: config.FILE_MAX_BYTES,
      persistDownload: (d) => persistDownload({ ...d, sourceUrl: vault.mask(d.sessionId, d.sourceUrl) }),
    },
    logger,
  );
  return pool;
}

/** Records each task's steps, with a picture of each when the machine has the room. */
function stepRecorder(config: Config, logger: Logger, store: Store, pool: BrowserPool): Recorder {
  const cpuGauge = new CpuGauge({ busyLimit: config.STEP_PICTURES_BUSY_CPU, loadPerCore: config.STEP_PICTURES_LOAD_LIMIT });
  const pictures = new StepPictures({ files: store.files, blobs: store.blobs, quota: store.quota, logger, pageOf: (sessionId) => pool.get(sessionId)?.page, cpuShort: () => cpuGauge.short() });
  return new Recorder({ recordings: store.recordings, logger, ...(config.STEP_PICTURES ? { pictures } : {}) });
}

function profileDirectories(config: Config, logger: Logger, store: Store): ProfileDirectories {
  return new ProfileDirectories({
    db: store.db,
    blobs: store.blobs,
    quota: store.quota,
    dataDir: config.DATA_DIR,
    maxArchiveBytes: config.PROFILE_MAX_BYTES,
    maxExpandedBytes: config.PROFILE_MAX_EXPANDED_BYTES,
    logger,
  });
}
