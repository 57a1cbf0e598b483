/**
 * Capacity at a real model's pace: a model that answers each call after a fixed delay (as a
 * hosted model takes a second or a few), and more and more sessions at once, each running a
 * task of click steps on clicks.html. Per delay and number of sessions: tasks completed, a
 * step's wall time split into the model's time and the service's share (p50/p95), CPU per
 * step by part of the stack, memory per active session; and the highest number of sessions
 * at which every task completed and the service's share of a step stayed within 300 ms at
 * p95 (that number and every smaller one of the ramp). Writes JSON to BENCH_CAPACITY_OUT.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseHistograms, perStepDelta, type Histograms } from './prom-histograms';
import { highestSustained, levelPasses, perStep, summary, taskSteps, type StepTimes } from './capacity-figures';
import { treePssApart } from './process-tree';
import { cpuBetween, cpuSnapshot, quiet, type CpuSnapshot } from './stack-cpu';
import { startFixtureServer } from '../test/support/fixtures-server';
import { api, waitFor } from '../test/support/http';
import { registerScript, startScriptedModel, type ScriptedModel } from '../test/support/scripted-model';
import { createUser, freePort, ROOT, startService, type ServiceProcess } from '../test/support/service';

const numbers = (text: string) => text.split(',').filter(Boolean).map(Number);
const DELAYS = numbers(process.env.BENCH_CAPACITY_DELAYS ?? '1000,3000');
const RAMP = numbers(process.env.BENCH_CAPACITY_RAMP ?? '10,20,30,40').sort((a, b) => a - b);
const STEPS = Number(process.env.BENCH_CAPACITY_STEPS ?? 8);
const SHARE_LIMIT_MS = 300;
const OUT = process.env.BENCH_CAPACITY_OUT ?? path.join(ROOT, '.data/bench-capacity.json');
const ITEMS = ['coffee', 'tea', 'milk', 'chocolate', 'bread'];
/** How often the memory of the service and its Chromium is read while the tasks step. */
const MEMORY_EVERY_MS = 10_000;
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

interface Stack {
  service: ServiceProcess;
  /** The worker's own /metrics, with the Temporal SDK's. */
  metricsUrl: string;
  model: ScriptedModel;
  pagesUrl: string;
  /** One user per session. */
  keys: string[];
}
interface Session {
  key: string;
  sessionId: string;
}

/** Opens `n` sessions at once, one per user, as users would; a 503 (the last level's browsers still closing) is tried again. */
async function startSessions(stack: Stack, n: number): Promise<Session[]> {
  return Promise.all(
    stack.keys.slice(0, n).map(async (key) => {
      let r = await api(stack.service.baseUrl, 'POST', '/start/start-session', { key, body: {} });
      for (let tries = 0; r.status === 503 && tries < 20; tries++) {
        await new Promise((res) => setTimeout(res, 1000));
        r = await api(stack.service.baseUrl, 'POST', '/start/start-session', { key, body: {} });
      }
      if (r.status !== 200) throw new Error(`start-session: ${r.status} ${r.text}`);
      return { key, sessionId: r.body.sessionId as string };
    }),
  );
}

async function endSessions(stack: Stack, sessions: Session[]): Promise<void> {
  await Promise.all(sessions.map((s) => api(stack.service.baseUrl, 'POST', '/start/send-message', { key: s.key, body: { sessionId: s.sessionId, message: { actionType: 'state', newState: 'terminate' } } })));
}

/**
 * Watches a run from the model's side: the steady window (from the moment every task made its
 * first model call until the first task made its last, when only stepping happens) with the
 * stack's CPU at both ends, and the peak memory of the service and its Chromium while the
 * tasks step, read on a thread of its own.
 */
function watchRun(stack: Stack, tokens: string[]) {
  const pid = stack.service.child.pid!;
  const mine = new Set(tokens);
  const counts = new Map<string, number>();
  const steady: { from?: { at: number; cpu: CpuSnapshot }; to?: { at: number; cpu: CpuSnapshot } } = {};
  let seen = 0;
  let peakPss = 0;
  let reading: Promise<void> | undefined;
  let lastRead = 0;
  const readMemory = () => {
    lastRead = Date.now();
    reading = treePssApart(pid).then((bytes) => {
      peakPss = Math.max(peakPss, bytes);
      reading = undefined;
    });
  };
  const timer = setInterval(() => {
    for (; seen < stack.model.requests.length; seen++) {
      const m = stack.model.requests[seen].match;
      if (m && mine.has(m)) counts.set(m, (counts.get(m) ?? 0) + 1);
    }
    if (!steady.from && counts.size === tokens.length) steady.from = { at: Date.now(), cpu: cpuSnapshot(pid) };
    if (steady.from && !steady.to && [...counts.values()].some((c) => c >= STEPS + 1)) steady.to = { at: Date.now(), cpu: cpuSnapshot(pid) };
    if (steady.from && !steady.to && !reading && Date.now() - lastRead >= MEMORY_EVERY_MS) readMemory();
  }, 20);
  return {
    async stop() {
      clearInterval(timer);
      await reading;
      if (!steady.from || !steady.to) return { peakPss, steady: null };
      const { from, to } = steady;
      const steps = stack.model.requests.filter((r) => r.match && mine.has(r.match) && r.at > from.at && r.at <= to.at).length;
      return { peakPss, steady: { ms: to.at - from.at, steps, cpuMsPerStep: perStep(cpuBetween(from.cpu, to.cpu), steps) } };
    },
  };
}

/** Starts a task of STEPS clicks in every session at once; each client waits for its task's answer inline, as a user of send-message does. */
async function runTasks(stack: Stack, sessions: Session[], tokens: string[]): Promise<{ status: string; error?: unknown }[]> {
  const base = stack.service.baseUrl;
  const started = await Promise.all(
    sessions.map((s, i) => api(base, 'POST', '/start/send-message', { key: s.key, body: { sessionId: s.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${tokens[i]} click`, startingUrl: `${stack.pagesUrl}/clicks.html` } } })),
  );
  return Promise.all(
    started.map(async (r, i) => {
      if (!r.body.taskId) return { status: `not started: ${r.status}`, error: r.body };
      const poll = () => api(base, 'GET', `/task/${sessions[i].sessionId}/${r.body.taskId}`);
      const ended = await waitFor(async () => {
        const t = await poll();
        return ['task_completed', 'failed', 'stopped'].includes(t.body.status) ? t.body : null;
      }, 300_000, 500).catch(async () => (await poll()).body);
      return { status: String(ended.status), error: ended.error };
    }),
  );
}

/** The steps of the level's tasks (model time and service share) and, per task, the time from its start request to its first model call. */
function stepsOf(model: ScriptedModel, tokens: string[], delayMs: number, startedAt: number): { steps: StepTimes[]; firstCallMs: number[]; modelCalls: number } {
  const steps: StepTimes[] = [];
  const firstCallMs: number[] = [];
  let modelCalls = 0;
  for (const token of tokens) {
    const calls = model.requests.filter((r) => r.match === token);
    modelCalls += calls.length;
    if (calls.length) firstCallMs.push(calls[0].at - startedAt);
    steps.push(...taskSteps(calls, delayMs));
  }
  return { steps, firstCallMs, modelCalls };
}

/** The worker's histograms now (none if its /metrics does not answer). */
async function histograms(stack: Stack): Promise<Histograms> {
  try {
    const r = await fetch(stack.metricsUrl);
    return r.ok ? parseHistograms(await r.text()) : {};
  } catch {
    return {};
  }
}

/**
 * Where a step's time went, from the worker's metrics over the level: per model call, the
 * Temporal SDK's waits (a workflow or activity task queued before a poller took it), its
 * executions and its requests to the server, and the worker's agent steps (model call included).
 */
function stepBreakdown(before: Histograms, after: Histograms, modelCalls: number) {
  const names = Object.keys(after).filter((name) => /^temporal_|^browser_agent_step_/.test(name));
  return perStepDelta(before, after, modelCalls, names);
}

/** One level of the ramp: `n` sessions opened together, then (the stack quiet again) a task in each at once. */
async function measureLevel(stack: Stack, delayMs: number, n: number) {
  const pid = stack.service.child.pid!;
  await quiet(pid);
  const baseline = await treePssApart(pid);
  const sessions = await startSessions(stack, n);
  // A new page keeps Chromium busy for about a second of CPU after it opened: the tasks start once the stack is quiet.
  await quiet(pid);
  const tokens = sessions.map((_, i) => `[bench-capacity-${delayMs}-${n}-${i}-${Date.now()}]`);
  const clicks = Array.from({ length: STEPS }, (_, k) => ({ tool: 'click_element', args: { index: { ref: `Add ${ITEMS[k % ITEMS.length]}` } }, delayMs }));
  await Promise.all(tokens.map((match) => registerScript(stack.model.url, { match, steps: [...clicks, { tool: 'done', args: { message: 'ok' }, delayMs }] })));
  const watch = watchRun(stack, tokens);
  const metrics0 = await histograms(stack);
  const cpu0 = cpuSnapshot(pid);
  const startedAt = Date.now();
  const outcomes = await runTasks(stack, sessions, tokens);
  const wallMs = Date.now() - startedAt;
  const cpu = cpuBetween(cpu0, cpuSnapshot(pid));
  const metrics1 = await histograms(stack);
  const { peakPss, steady } = await watch.stop();
  await endSessions(stack, sessions);
  const { steps, firstCallMs, modelCalls } = stepsOf(stack.model, tokens, delayMs, startedAt);
  const completed = outcomes.filter((o) => o.status === 'task_completed').length;
  const level = {
    sessions: n,
    tasks: { completed, failed: n - completed, notCompleted: outcomes.filter((o) => o.status !== 'task_completed').slice(0, 3) },
    stepMs: summary(steps.map((s) => s.wallMs)),
    modelMs: summary(steps.map((s) => s.modelMs)),
    serviceShareMs: summary(steps.map((s) => s.serviceMs)),
    firstModelCallMs: summary(firstCallMs),
    wallMs,
    // The whole run (the tasks' first looks at the page and their ends included), per model call.
    cpuMsPerStep: perStep(cpu, modelCalls),
    steadyState: steady,
    // Per model call, from the worker's metrics (ms; the step's duration in seconds).
    breakdown: stepBreakdown(metrics0, metrics1, modelCalls),
    cpuUsedOfWall: Math.round((Object.values(cpu).reduce((x, y) => x + y, 0) / (wallMs * 2)) * 100) / 100,
    memoryMB: { baseline: mb(baseline), peakWhileActive: mb(peakPss), perActiveSession: peakPss ? mb((peakPss - baseline) / n) : null },
  };
  return { ...level, passed: levelPasses({ sessions: n, completed, serviceShareP95Ms: level.serviceShareMs.p95 }, SHARE_LIMIT_MS) };
}

type Level = Awaited<ReturnType<typeof measureLevel>>;

/** The ramp of one model delay, up to the first level that fails (every level above it would too). */
async function rampAt(stack: Stack, delayMs: number, report: (levels: Level[]) => void) {
  const levels: Level[] = [];
  for (const n of RAMP) {
    levels.push(await measureLevel(stack, delayMs, n));
    report(levels);
    if (!levels[levels.length - 1].passed) break;
  }
  const highest = highestSustained(levels.map((l) => ({ sessions: l.sessions, completed: l.tasks.completed, serviceShareP95Ms: l.serviceShareMs.p95 })), SHARE_LIMIT_MS);
  return { delayMs, levels, highest };
}

/** The service as shipped but for the limits a bench of many users needs (sessions, rate limit, the inline wait). */
async function startStack(): Promise<{ stack: Stack; close(): Promise<void> }> {
  const model = await startScriptedModel();
  const pages = await startFixtureServer(path.join(ROOT, 'test/fixtures'));
  process.env.TEST_FIXTURES_URL = pages.url;
  process.env.TEST_LLM_BASE_URL = model.url;
  const most = Math.max(...RAMP);
  const [metricsPort, temporalMetricsPort] = [await freePort(), await freePort()];
  const service = await startService({
    METRICS_PORT: String(metricsPort),
    TEMPORAL_METRICS_PORT: String(temporalMetricsPort),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    TEMPORAL_TASK_QUEUE: `bench-capacity-${Date.now()}`,
    BROWSER_MAX_SESSIONS: String(most + 5),
    DEFAULT_SESSION_LIMIT: '100',
    RATE_LIMIT_PER_MINUTE: '1000',
    INLINE_WAIT_MS: '300000',
    // Pictures of steps as shipped (the tests' environment takes every one).
    STEP_PICTURES_LOAD_LIMIT: '1.2',
    STEP_PICTURES_BUSY_CPU: '0.85',
  });
  const keys: string[] = [];
  for (let i = 0; i < most; i++) keys.push((await createUser({ balance: 1000 })).apiKey);
  const close = async () => {
    await service.stop();
    await pages.close();
    await model.close();
  };
  return { stack: { service, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, model, pagesUrl: pages.url, keys }, close };
}

it('capacity at a real model pace', async () => {
  const { stack, close } = await startStack();
  const delays: Awaited<ReturnType<typeof rampAt>>[] = [];
  const write = (current?: { delayMs: number; levels: Level[] }) =>
    fs.writeFileSync(
      OUT,
      JSON.stringify(
        {
          benchmark: 'capacity',
          machine: '2 cores, one worker process (API and worker in one process), Debian Chromium',
          stepsPerTask: STEPS,
          page: 'clicks.html',
          stepPictures: 'as shipped (every other step while the CPU is short)',
          users: 'one per session',
          rule: `highest: the highest number of sessions at which that level and every smaller one had every task completed and the service's share of a step within ${SHARE_LIMIT_MS} ms at p95`,
          delays: current ? [...delays, { ...current, highest: null }] : delays,
          target: { sessionsAt1sModel: 30, serviceShareP95Ms: SHARE_LIMIT_MS },
        },
        null,
        2,
      ),
    );
  try {
    await new Promise((r) => setTimeout(r, 3000)); // the ready contexts are made
    for (const delayMs of DELAYS) {
      delays.push(await rampAt(stack, delayMs, (levels) => write({ delayMs, levels })));
      write();
    }
  } finally {
    await close();
  }
  for (const d of delays) expect(d.levels.length).toBeGreaterThan(0);
}, 3_600_000);
