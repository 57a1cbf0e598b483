/**
 * A long run on one stack: BENCH_SOAK_TASKS tasks of the scripted model, paced over
 * BENCH_SOAK_MINUTES, in sessions that users create, use and end through the API; a sixth of
 * the sessions are left idle until SESSION_IDLE_TIMEOUT_MS expires them, a sixth have a task
 * taken over and handed back, a sixth have a task stopped mid-way. The stack's memory is read
 * every BENCH_SOAK_SAMPLE_MS; after the run: each process's memory at the load's end against
 * where it settled, Chromium processes and contexts against the idle pool, the database's
 * size and records, and every task's record (its status, usage and recording). The service
 * keeps ended sessions' records BENCH_SOAK_RETENTION_MINUTES and sweeps every 30 s; the store
 * is read every BENCH_SOAK_STORE_SAMPLE_MS. Each task's status, usage and recording are read as
 * it ends; a task whose record is gone at the end counts as swept when its session ended more
 * than the retention before, as lost otherwise.
 *   BENCH_SOAK_TASKS (2000), BENCH_SOAK_MINUTES (30), BENCH_SOAK_CONCURRENCY (6),
 *   BENCH_SOAK_SETTLE_MINUTES (5), BENCH_SOAK_IDLE_TIMEOUT_MS (30000), BENCH_SOAK_MAX_MINUTES
 *   (MINUTES + 5: no task starts later), BENCH_SOAK_RETENTION_MINUTES (5; 0: kept forever),
 *   BENCH_SOAK_STORE_SAMPLE_MS (180000); JSON to BENCH_SOAK_OUT, progress on stderr each minute.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { summary } from './capacity-figures';
import { drift, kbPerTask, recordComplete, sessionKind, settleFinal, tally, type MemorySample, type TaskKind, type TaskRecord } from './soak-figures';
import { dirBytes, infraPids, readStack, temporalBytes, type StackPids, type StackReading } from './soak-probe';
import { quiet } from './stack-cpu';
import { startFixtureServer } from '../test/support/fixtures-server';
import { api, waitFor } from '../test/support/http';
import { registerScript, startScriptedModel, type ScriptedModel, type Step } from '../test/support/scripted-model';
import { createUser, ROOT, serviceEnv, startService, type ServiceProcess } from '../test/support/service';

const TASKS = Number(process.env.BENCH_SOAK_TASKS ?? 2000);
const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 30);
const LANES = Number(process.env.BENCH_SOAK_CONCURRENCY ?? 6);
const SETTLE_MS = Number(process.env.BENCH_SOAK_SETTLE_MINUTES ?? 5) * 60_000;
const IDLE_TIMEOUT_MS = Number(process.env.BENCH_SOAK_IDLE_TIMEOUT_MS ?? 30_000);
const SAMPLE_MS = Number(process.env.BENCH_SOAK_SAMPLE_MS ?? 15_000);
/** No task starts past this (the run says how many it started by then). */
const MAX_MS = Number(process.env.BENCH_SOAK_MAX_MINUTES ?? MINUTES + 5) * 60_000;
const RETENTION_MINUTES = Number(process.env.BENCH_SOAK_RETENTION_MINUTES ?? 5);
const RETENTION_MS = RETENTION_MINUTES > 0 ? RETENTION_MINUTES * 60_000 : null;
const SWEEP_INTERVAL_MS = 30_000;
const STORE_SAMPLE_MS = Number(process.env.BENCH_SOAK_STORE_SAMPLE_MS ?? 180_000);
const WINDOW_MS = 60_000;
const MODEL_DELAY_MS = 300;
const CLICKS = 3;
const LIMIT_PCT = 10;
const OUT = process.env.BENCH_SOAK_OUT ?? path.join(ROOT, '.data/bench-soak.json');
const ITEMS = ['coffee', 'tea', 'milk', 'chocolate', 'bread'];
const ENDED = ['task_completed', 'stopped', 'failed'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Stack {
  service: ServiceProcess;
  model: ScriptedModel;
  pagesUrl: string;
  pids: StackPids;
  /** One user per lane. */
  keys: string[];
}

/** What the run shares between its lanes: the count of tasks started, the tasks, the sessions left idle. */
interface Run {
  stack: Stack;
  startedAt: number;
  started: number;
  sessions: number;
  tasks: (TaskRecord & { sessionId?: string; key: string; startError?: string; sessionEndedAt?: number })[];
  /** Sessions left idle (`endedAt`: when they expire at the earliest) and ended by their owner. */
  idle: SessionEnd[];
  ended: SessionEnd[];
  /** Model requests by script token, counted as they arrive. */
  calls: Map<string, number>;
  seq: number;
  takeovers: number;
  errors: string[];
  /** Each recording read: when (ms into the run) and how long it took. */
  recordingReads: { at: number; ms: number }[];
}

interface SessionEnd {
  sessionId: string;
  key: string;
  endedAt: number;
}

const send = (run: Run, key: string, sessionId: string, message: Record<string, unknown>) => api(run.stack.service.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message } });
const poll = (run: Run, sessionId: string, taskId: string) => api(run.stack.service.baseUrl, 'GET', `/task/${sessionId}/${taskId}`);

/** Waits until a task's status is one of `statuses`; its last answer either way. */
async function pollUntil(run: Run, sessionId: string, taskId: string, statuses: string[], timeoutMs: number): Promise<{ status?: string }> {
  return waitFor(async () => {
    const r = await poll(run, sessionId, taskId);
    return statuses.includes(r.body.status) ? r.body : null;
  }, timeoutMs, 250).catch(async () => (await poll(run, sessionId, taskId)).body);
}

/** Holds a lane until the run is not ahead of its pace (TASKS over MINUTES); false once every task started. */
async function paced(run: Run): Promise<boolean> {
  for (;;) {
    if (run.started >= TASKS || Date.now() - run.startedAt > MAX_MS) return false;
    const due = (TASKS * (Date.now() - run.startedAt)) / (MINUTES * 60_000) + LANES;
    if (run.started < due) return true;
    await sleep(200);
  }
}

/** The script of a task: plain clicks then done; a taken-over task more of them, slower; a stopped task waits forever. */
function scriptOf(kind: TaskKind): Step[] {
  const click = (k: number): Step => ({ tool: 'click_element', args: { index: { ref: `Add ${ITEMS[k % ITEMS.length]}` } }, delayMs: MODEL_DELAY_MS });
  if (kind === 'stopped') return [{ text: 'Waiting for the list.', tool: 'wait', args: { seconds: 0.2 }, delayMs: MODEL_DELAY_MS }];
  const clicks = kind === 'plain' ? CLICKS : CLICKS + 3;
  return [...Array.from({ length: clicks }, (_, k) => click(k)), { tool: 'done', args: { message: 'ordered' }, delayMs: MODEL_DELAY_MS }];
}

/** Starts a task in a session (answered inline or pending); its record is in run.tasks. */
async function startTask(run: Run, key: string, sessionId: string, kind: TaskKind) {
  const token = `[soak-${++run.seq}-${run.startedAt}]`;
  await registerScript(run.stack.model.url, { match: token, steps: scriptOf(kind) });
  const task: Run['tasks'][number] = { kind, key, sessionId };
  run.tasks.push(task);
  run.started++;
  const answer = send(run, key, sessionId, { actionType: 'newTask', newState: 'start', prompt: `${token} order`, startingUrl: `${run.stack.pagesUrl}/clicks.html` }).then((r) => {
    if (r.body.taskId) task.taskId = r.body.taskId;
    else task.startError = `${r.status} ${r.text.slice(0, 200)}`;
    return r;
  });
  return { task, token, answer };
}

/** Waits until the model got `n` requests of a token (the task is under way). */
async function modelCalls(run: Run, token: string, n: number): Promise<void> {
  await waitFor(async () => ((run.calls.get(token) ?? 0) >= n ? true : null), 60_000, 50).catch(() => undefined);
}

async function plainTask(run: Run, key: string, sessionId: string): Promise<void> {
  const { task, answer } = await startTask(run, key, sessionId, 'plain');
  const r = await answer;
  if (task.taskId && !ENDED.includes(r.body.status ?? r.body.type)) await pollUntil(run, sessionId, task.taskId, ENDED, 300_000);
  await readRecord(run, task);
}

/**
 * A person takes over once the agent is under way, holds control a second and hands it back;
 * the task then ends (the inline answer waits through the takeover, so it is read after).
 */
async function takenOverTask(run: Run, key: string, sessionId: string): Promise<void> {
  const { task, token, answer } = await startTask(run, key, sessionId, 'takeover');
  await modelCalls(run, token, 2);
  const took = await send(run, key, sessionId, { actionType: 'interaction', action: { type: 'takeOverControl' } });
  if (took.body.success) run.takeovers++;
  await sleep(1000);
  await send(run, key, sessionId, { actionType: 'interaction', action: { type: 'releaseControl' } });
  const r = await answer;
  if (task.taskId && !ENDED.includes(r.body.status ?? r.body.type)) await pollUntil(run, sessionId, task.taskId, ENDED, 300_000);
  await readRecord(run, task);
}

/** The agent is stopped mid-task, after its second model request. */
async function stoppedTask(run: Run, key: string, sessionId: string): Promise<void> {
  const { task, token, answer } = await startTask(run, key, sessionId, 'stopped');
  await modelCalls(run, token, 2);
  await send(run, key, sessionId, { actionType: 'state', newState: 'stop' });
  await answer;
  if (task.taskId) await pollUntil(run, sessionId, task.taskId, ENDED, 60_000);
  await readRecord(run, task);
}

/** One session of the mix: opened, its tasks, then ended by its owner or left idle to expire. */
async function oneSession(run: Run, key: string): Promise<void> {
  const kind = sessionKind(run.sessions++);
  const r = await api(run.stack.service.baseUrl, 'POST', '/start/start-session', { key, body: {} });
  if (r.status !== 200) {
    run.tasks.push({ kind: 'plain', key, startError: `start-session ${r.status} ${r.text.slice(0, 200)}` });
    await sleep(1000);
    return;
  }
  const sessionId = r.body.sessionId as string;
  const tasks: ((run: Run, key: string, sessionId: string) => Promise<void>)[] =
    kind === 'takeover' ? [takenOverTask, plainTask] : kind === 'stopped' ? [stoppedTask, plainTask] : kind === 'idle' ? [plainTask, plainTask] : [plainTask, plainTask, plainTask];
  for (const task of tasks) {
    if (!(await paced(run))) break;
    await task(run, key, sessionId);
  }
  if (kind === 'idle') return void sessionEnded(run, run.idle, { sessionId, key, endedAt: Date.now() + IDLE_TIMEOUT_MS });
  const end = await send(run, key, sessionId, { actionType: 'state', newState: 'terminate' });
  if (end.status === 200) sessionEnded(run, run.ended, { sessionId, key, endedAt: Date.now() });
}

/** Notes when a session ended on it and on its tasks (what tells a swept task from a lost one). */
function sessionEnded(run: Run, list: SessionEnd[], end: SessionEnd): void {
  list.push(end);
  for (const t of run.tasks) if (t.sessionId === end.sessionId) t.sessionEndedAt = end.endedAt;
}

/** One user's sessions one after another; a request the API answered unexpectedly is counted and the lane goes on. */
async function lane(run: Run, key: string): Promise<void> {
  while (await paced(run)) {
    await oneSession(run, key).catch((err: Error) => {
      run.errors.push(err.message.slice(0, 300));
      return sleep(1000);
    });
  }
}

/** Counts the model's requests by token as they come (the lanes wait on them). */
function countCalls(run: Run): () => void {
  let seen = 0;
  const timer = setInterval(() => {
    for (const reqs = run.stack.model.requests; seen < reqs.length; seen++) {
      const m = reqs[seen].match;
      if (m) run.calls.set(m, (run.calls.get(m) ?? 0) + 1);
    }
  }, 25);
  return () => clearInterval(timer);
}

/** Reads the stack's memory every SAMPLE_MS until stopped. */
function sampleMemory(stack: Stack, startedAt: number) {
  const samples: (MemorySample & { chromium: StackReading['chromium'] })[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now() - startedAt;
      const r = await readStack(stack.pids).catch(() => null);
      const heap = await serviceHeapMB(stack);
      if (r) samples.push({ at, mb: heap === null ? r.mb : { ...r.mb, serviceHeap: heap }, chromium: r.chromium });
      await sleep(SAMPLE_MS);
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** The service's V8 heap in use (its /metrics), MB: what the service's objects hold, without the resident size's swings. */
async function serviceHeapMB(stack: Stack): Promise<number | null> {
  const text = await fetch(`${stack.service.baseUrl}/metrics`).then((r) => r.text()).catch(() => '');
  const bytes = Number(/^browser_agent_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1] ?? NaN);
  return Number.isFinite(bytes) ? Math.round((bytes / 1024 / 1024) * 10) / 10 : null;
}

/** The store now: the database's files, Temporal's, the blob files, dbStats and the records of each collection. */
async function storeReading(mongo: MongoClient) {
  const dataDir = serviceEnv().DATA_DIR;
  const db = mongo.db();
  const stats = await db.command({ dbStats: 1 }).catch(() => ({}) as Record<string, number>);
  const records: Record<string, number> = {};
  for (const c of await db.listCollections({}, { nameOnly: true }).toArray()) records[c.name] = await db.collection(c.name).countDocuments();
  return {
    ferretdbFilesBytes: dirBytes(path.join(dataDir, 'ferretdb')),
    temporalFilesBytes: temporalBytes(dataDir),
    blobFilesBytes: dirBytes(path.join(dataDir, 'blobs')),
    dbStats: { dataSize: stats.dataSize ?? null, storageSize: stats.storageSize ?? null, indexSize: stats.indexSize ?? null },
    records: Object.fromEntries(Object.entries(records).sort()),
  };
}

/** Reads the store every STORE_SAMPLE_MS until stopped, with the tasks started by then. */
function sampleStore(mongo: MongoClient, run: Run) {
  const samples: ({ at: number; tasksStarted: number } & Store)[] = [];
  let stopped = false;
  let wake = () => {};
  let timer: NodeJS.Timeout | undefined;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now() - run.startedAt;
      const tasksStarted = run.started;
      const r = await storeReading(mongo).catch(() => null);
      if (r) samples.push({ at, tasksStarted, ...r });
      if (!stopped) await new Promise<void>((resolve) => ((wake = resolve), (timer = setTimeout(resolve, STORE_SAMPLE_MS))));
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake();
      await loop;
    },
  };
}

/** The browser side as a user and an operator see it: sessions open (health) and sessions holding a context (metrics). */
async function browserSide(stack: Stack) {
  const health = await api(stack.service.baseUrl, 'GET', '/start/health');
  const metrics = await fetch(`${stack.service.baseUrl}/metrics`).then((r) => r.text());
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  const reading = await readStack(stack.pids);
  return { sessionsOpen: health.body.sessionsOpen as number, contextsHeld: gauge('browser_agent_browser_sessions'), chromiumProcesses: reading.chromium.processes, renderers: reading.chromium.renderers, chromiumByType: reading.chromium.byType, memoryMB: reading.mb };
}

/** A task's record read back as its owner would once it ended: its status and usage, its recording's actions, and how long that read took. */
async function readRecord(run: Run, t: Run['tasks'][number]): Promise<void> {
  if (!t.taskId) return;
  const task = await poll(run, t.sessionId!, t.taskId);
  t.status = task.status === 200 ? task.body.status : `http ${task.status}`;
  t.hasUsage = typeof task.body.usage === 'object' && task.body.usage !== null;
  const t0 = Date.now();
  const rec = await api(run.stack.service.baseUrl, 'GET', `/task/${t.sessionId}/${t.taskId}/recording`, { key: t.key });
  run.recordingReads.push({ at: t0 - run.startedAt, ms: Date.now() - t0 });
  t.actions = rec.status === 200 && Array.isArray(rec.body.steps) ? rec.body.steps.map((s: { action: string }) => s.action) : null;
}

/** Every task's status and usage read again at the end (GET /task); a record gone is swept or lost (settleFinal). */
async function readStatuses(run: Run): Promise<void> {
  const queue = run.tasks.filter((t) => t.taskId);
  const worker = async () => {
    for (let t = queue.shift(); t; t = queue.shift()) {
      const r = await poll(run, t.sessionId!, t.taskId!);
      const final = { http: r.status, status: r.body.status, hasUsage: typeof r.body.usage === 'object' && r.body.usage !== null };
      Object.assign(t, settleFinal(t, final, t.sessionEndedAt === undefined ? null : Date.now() - t.sessionEndedAt, RETENTION_MS));
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

/** How the sessions ended: the idle ones should have expired, the others been terminated; gone past the retention: swept. */
async function sessionEnds(run: Run, sessions: SessionEnd[], timeoutMs: number): Promise<Record<string, number>> {
  const end = Date.now() + timeoutMs;
  const out: Record<string, number> = {};
  for (const s of sessions) {
    let status = 'unknown';
    do {
      const r = await api(run.stack.service.baseUrl, 'GET', `/start/sessions/${s.sessionId}/events?limit=1`, { key: s.key });
      status = r.status === 200 ? `${r.body.status}${r.body.endReason ? `:${r.body.endReason}` : ''}` : `http ${r.status}`;
      if (r.status === 404 && RETENTION_MS !== null && Date.now() - s.endedAt > RETENTION_MS) status = 'swept';
      if (!/^(active|pending)/.test(status)) break;
      await sleep(1000);
    } while (Date.now() < end);
    out[status] = (out[status] ?? 0) + 1;
  }
  return out;
}

/** The service as shipped, but for the limits a bench of many users needs and a short idle timeout. */
async function startStack(): Promise<{ stack: Stack; close(): Promise<void> }> {
  const model = await startScriptedModel();
  const pages = await startFixtureServer(path.join(ROOT, 'test/fixtures'));
  process.env.TEST_FIXTURES_URL = pages.url;
  process.env.TEST_LLM_BASE_URL = model.url;
  const service = await startService({
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    TEMPORAL_TASK_QUEUE: `bench-soak-${Date.now()}`,
    BROWSER_MAX_SESSIONS: String(LANES + 30),
    DEFAULT_SESSION_LIMIT: '100',
    RATE_LIMIT_PER_MINUTE: '100000',
    RECORDINGS_RATE_LIMIT_PER_MINUTE: '100000',
    SESSION_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
    SESSION_IDLE_DISCARD_MS: '60000',
    RECORDS_RETENTION_DAYS: String(RETENTION_MINUTES / 1440),
    RECORDS_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
    STEP_PICTURES_LOAD_LIMIT: '1.2',
    STEP_PICTURES_BUSY_CPU: '0.85',
  });
  const keys: string[] = [];
  for (let i = 0; i < LANES; i++) keys.push((await createUser({ balance: 1000, sessionLimit: 100 })).apiKey);
  const pids = { service: service.child.pid!, ...infraPids(serviceEnv().DATA_DIR) };
  const close = async () => {
    await service.stop();
    await pages.close();
    await model.close();
  };
  return { stack: { service, model, pagesUrl: pages.url, pids, keys }, close };
}

/** Drives the lanes to the last task, reading the store when memory settled; the load's figures. */
async function drive(run: Run, mongo: MongoClient) {
  let settledStore: Awaited<ReturnType<typeof storeReading>> | null = null;
  const settledAt = setTimeout(() => void storeReading(mongo).then((s) => (settledStore = s)), SETTLE_MS + WINDOW_MS);
  await Promise.all(run.stack.keys.map((key) => lane(run, key)));
  clearTimeout(settledAt);
  return { loadMs: Date.now() - run.startedAt, settledStore: settledStore as Awaited<ReturnType<typeof storeReading>> | null };
}

/** After the load: the idle sessions expired, the stack quiet, the records read back. */
async function aftermath(run: Run) {
  const idleEnds = await sessionEnds(run, run.idle, IDLE_TIMEOUT_MS + 180_000);
  const endedEnds = await sessionEnds(run, run.ended, 60_000);
  await waitFor(async () => ((await browserSide(run.stack)).sessionsOpen === 0 ? true : null), 120_000, 2000).catch(() => undefined);
  await quiet(run.stack.pids.service);
  await sleep(5000);
  const browsers = await browserSide(run.stack);
  await readStatuses(run);
  return { idleEnds, endedEnds, browsers };
}

it('a long run that leaks nothing', async () => {
  const { stack, close } = await startStack();
  const mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27029/browser_agent_bench');
  try {
    await sleep(5000); // the ready contexts are made
    await quiet(stack.pids.service);
    const idlePool = await browserSide(stack);
    const startStore = await storeReading(mongo);
    const run: Run = { stack, startedAt: Date.now(), started: 0, sessions: 0, tasks: [], idle: [], ended: [], calls: new Map(), seq: 0, takeovers: 0, errors: [], recordingReads: [] };
    const stopCounting = countCalls(run);
    const sampler = sampleMemory(stack, run.startedAt);
    const storeSampler = sampleStore(mongo, run);
    const progress = setInterval(() => process.stderr.write(`soak ${Math.round((Date.now() - run.startedAt) / 60_000)} min: ${run.started} tasks started, ${run.sessions} sessions, ${run.errors.length} client errors, ${JSON.stringify(sampler.samples.at(-1)?.mb ?? {})}\n`), 60_000);
    const { loadMs, settledStore } = await drive(run, mongo);
    clearInterval(progress);
    const endStore = await storeReading(mongo);
    const after = await aftermath(run);
    await sampler.stop();
    await storeSampler.stop();
    stopCounting();
    const finalStore = await storeReading(mongo);
    const out = report(run, { loadMs, idlePool, after, stores: { start: startStore, settled: settledStore, loadEnd: endStore, end: finalStore }, samples: sampler.samples, storeSamples: storeSampler.samples });
    fs.writeFileSync(OUT, JSON.stringify(out, null, 2));
    process.stdout.write(`${JSON.stringify({ tasks: out.tasks, memory: out.memory, browsers: out.browsers })}\n`);
    expect(out.tasks.lost).toBe(0);
  } finally {
    await mongo.close();
    await close();
  }
}, 4 * 3_600_000);

type Store = Awaited<ReturnType<typeof storeReading>>;

/** The JSON of the run. */
function report(
  run: Run,
  r: {
    loadMs: number;
    idlePool: Awaited<ReturnType<typeof browserSide>>;
    after: Awaited<ReturnType<typeof aftermath>>;
    stores: Record<string, Store | null>;
    samples: (MemorySample & { chromium: StackReading['chromium'] })[];
    storeSamples: ReturnType<typeof sampleStore>['samples'];
  },
) {
  const windows = { settleFrom: SETTLE_MS, windowMs: WINDOW_MS, loadEnd: r.loadMs };
  const parts = Object.keys(r.samples[0]?.mb ?? {});
  const t = tally(run.tasks, CLICKS);
  const { start, settled, loadEnd, end } = r.stores;
  const reads = run.recordingReads.map((x) => x.ms);
  const lostExamples = run.tasks.filter((x) => x.taskId && !recordComplete(x, CLICKS)).slice(0, 5);
  return {
    benchmark: 'soak',
    settings: { tasks: TASKS, minutes: MINUTES, maxMinutes: MAX_MS / 60_000, lanes: LANES, settleMinutes: SETTLE_MS / 60_000, idleTimeoutMs: IDLE_TIMEOUT_MS, modelDelayMs: MODEL_DELAY_MS, clicksPerPlainTask: CLICKS, sampleMs: SAMPLE_MS, retentionMinutes: RETENTION_MINUTES, sweepIntervalMs: SWEEP_INTERVAL_MS, storeSampleMs: STORE_SAMPLE_MS },
    durationMs: r.loadMs,
    sessions: { opened: run.sessions, idleLeftToExpire: run.idle.length, endedByOwner: run.ended.length, idleEnds: r.after.idleEnds, endedEnds: r.after.endedEnds, takeoversAccepted: run.takeovers },
    clientErrors: { count: run.errors.length, first: run.errors.slice(0, 5) },
    tasks: { ...t, notStarted: run.tasks.filter((x) => !x.taskId).length, startErrors: run.tasks.filter((x) => x.startError).slice(0, 5).map((x) => x.startError), lostExamples: lostExamples.map((x) => ({ kind: x.kind, status: x.status, hasUsage: x.hasUsage, actions: x.actions, missing: x.missing })) },
    memory: Object.fromEntries(parts.map((p) => [p, drift(r.samples, p, windows, LIMIT_PCT)])),
    memoryLimitPct: LIMIT_PCT,
    recordingReadMs: { first10Pct: summary(reads.slice(0, Math.ceil(reads.length / 10))), last10Pct: summary(reads.slice(-Math.ceil(reads.length / 10))) },
    browsers: { idlePool: r.idlePool, end: r.after.browsers, chromiumProcessesMax: Math.max(0, ...r.samples.map((s) => s.chromium.processes)) },
    store: {
      ...r.stores,
      kbPerTaskDuringLoad: start && loadEnd ? { ferretdb: kbPerTask(start.ferretdbFilesBytes, loadEnd.ferretdbFilesBytes, t.started), temporal: kbPerTask(start.temporalFilesBytes, loadEnd.temporalFilesBytes, t.started), blobs: kbPerTask(start.blobFilesBytes, loadEnd.blobFilesBytes, t.started) } : null,
      settledToEndMB: settled && end ? Math.round(((end.ferretdbFilesBytes - settled.ferretdbFilesBytes) / 1024 / 1024) * 10) / 10 : null,
    },
    storeSamples: r.storeSamples,
    samples: r.samples.map((s) => ({ at: s.at, ...s.mb, chromiumProcesses: s.chromium.processes, renderers: s.chromium.renderers })),
  };
}
