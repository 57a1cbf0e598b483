/**
 * Many sessions at once on one worker process (this machine: 2 cores): memory per idle and
 * per active session (proportional set size of the service process and its Chromium
 * processes, so shared pages count once), step times with 20 tasks running together, the
 * highest number of concurrent sessions whose step p95 stays within 2 s, and how sessions
 * spread over two worker processes. Writes JSON to BENCH_CONCURRENCY_OUT.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { treePss } from './process-tree';
import { cpuBetween, cpuSnapshot, quiet } from './stack-cpu';
import { startFixtureServer } from '../test/support/fixtures-server';
import { api, waitFor } from '../test/support/http';
import { recordedRequests, registerScript, startScriptedModel } from '../test/support/scripted-model';
import { createUser, ROOT, startService, type ServiceProcess } from '../test/support/service';

const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 20);
const STEPS = Number(process.env.BENCH_CONCURRENT_STEPS ?? 8);
const RAMP = (process.env.BENCH_RAMP ?? '5,10,15,25,30').split(',').filter(Boolean).map(Number);
const LIMIT_MS = 2_000;
const PAGE = process.env.BENCH_CONCURRENT_PAGE ?? 'form.html';
const ONE_USER = process.env.BENCH_ONE_USER === 'true';
/** What each step does: `click` (the agent's usual step: a button that changes the page and sends a request, on clicks.html) or `scroll` (on BENCH_CONCURRENT_PAGE). */
const EVERY_PICTURE = process.env.BENCH_EVERY_PICTURE === 'true';
const ACTION = process.env.BENCH_CONCURRENT_ACTION === 'scroll' ? 'scroll' : 'click';
const ITEMS = ['coffee', 'tea', 'milk', 'chocolate', 'bread'];
const stepOf = (k: number) => (ACTION === 'click' ? { tool: 'click_element', args: { index: { ref: `Add ${ITEMS[k % ITEMS.length]}` } } } : { tool: 'scroll', args: { direction: k % 2 ? 'up' : 'down' } });
const PAGE_OF_ACTION = ACTION === 'click' ? 'clicks.html' : PAGE;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10 : null;
};
const summary = (xs: number[]) => ({ p50: pct(xs, 50), p95: pct(xs, 95), n: xs.length });
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

it('many sessions at once', async () => {
  const model = await startScriptedModel();
  const fixtures = await startFixtureServer(path.join(ROOT, 'test/fixtures'));
  process.env.TEST_FIXTURES_URL = fixtures.url;
  process.env.TEST_LLM_BASE_URL = model.url;
  const queue = `bench-many-${Date.now()}`;
  // Pictures degrade under load as shipped (every other step while the CPU is short); with
  // BENCH_EVERY_PICTURE=true every step that changed the view gets one, as the tests have it.
  const picturesUnderLoad: Record<string, string> = EVERY_PICTURE ? {} : { STEP_PICTURES_LOAD_LIMIT: '1.2', STEP_PICTURES_BUSY_CPU: '0.85' };
  // BENCH_NODE_OPTIONS: e.g. `--require <file>` to profile the service process.
  const common = { ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}), LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', TEMPORAL_TASK_QUEUE: queue, INLINE_WAIT_MS: '180000', RATE_LIMIT_PER_MINUTE: '1000', DEFAULT_SESSION_LIMIT: '100', ...(process.env.BENCH_STEP_PICTURES ? { STEP_PICTURES: process.env.BENCH_STEP_PICTURES } : {}), ...picturesUnderLoad };
  const maxSessions = String(Math.max(CONCURRENT, ...RAMP) + 5);
  let service: ServiceProcess | undefined = await startService({ ...common, BROWSER_MAX_SESSIONS: maxSessions });
  const mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL!);
  // One user per session, made one after another before the runs; or, with BENCH_ONE_USER=true,
  // every session of one user (as a customer running many sessions under one key).
  const keys: string[] = [];
  for (let i = 0; i < (ONE_USER ? 1 : Math.max(CONCURRENT, 10, ...RAMP)); i++) keys.push((await createUser(ONE_USER ? { balance: 100_000, sessionLimit: 100 } : { balance: 1000 })).apiKey);
  const keyFor = async (i: number) => keys[ONE_USER ? 0 : i];
  /** What went wrong, with the end of the service's output, for a look after a failed run. */
  const leaveOutput = (base: ServiceProcess, what: string) => fs.writeFileSync(path.join(ROOT, '.data/bench-concurrency-stuck.log'), `${what}\n${base.output().slice(-20000)}`);
  const startSessions = async (n: number, base: ServiceProcess) =>
    startAll(n, base).catch((err) => {
      leaveOutput(base, String(err));
      throw err;
    });
  const startAll = async (n: number, base: ServiceProcess) =>
    Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const key = await keyFor(i);
        // Right after a run, the worker may still be closing the last sessions' browsers: a 503 is tried again.
        let r = await api(base.baseUrl, 'POST', '/start/start-session', { key, body: {} });
        for (let tries = 0; r.status === 503 && tries < 20; tries++) {
          await new Promise((res) => setTimeout(res, 1000));
          r = await api(base.baseUrl, 'POST', '/start/start-session', { key, body: {} });
        }
        if (r.status !== 200) throw new Error(`start-session: ${r.status} ${r.text}`);
        return { key, sessionId: r.body.sessionId as string };
      }),
    );
  const end = (base: ServiceProcess, sessions: { key: string; sessionId: string }[]) =>
    Promise.all(sessions.map((s) => api(base.baseUrl, 'POST', '/start/send-message', { key: s.key, body: { sessionId: s.sessionId, message: { actionType: 'state', newState: 'terminate' } } })));
  /** Runs a task of STEPS clicks (or scrolls) on a page of ordinary size in every session at once; the intervals between a task's model requests are its step times. */
  const runTasks = async (base: ServiceProcess, sessions: { key: string; sessionId: string }[], label: string, opts: { memory?: boolean } = {}) => {
    const tokens = sessions.map((_, i) => `[bench-many-${label}-${i}-${Date.now()}]`);
    await Promise.all(tokens.map((t) => registerScript(model.url, { match: t, steps: [...Array.from({ length: STEPS }, (_, k) => stepOf(k)), { tool: 'done', args: { message: 'ok' } }] })));
    let peak = 0;
    // Reading the memory maps of 40 processes takes the bench's thread (which answers as the
    // model) for about half a second each time, and CPU of its own: only a run that measures
    // memory samples it, never a run whose step times are taken.
    let sampling = 0;
    const sampler = opts.memory
      ? setInterval(() => {
          const s0 = performance.now();
          peak = Math.max(peak, treePss(base.child.pid!));
          sampling += performance.now() - s0;
        }, 2000)
      : undefined;
    const cpu0 = cpuSnapshot(base.child.pid!);
    const t0 = performance.now();
    // The steady window: from the moment every task has made its first model call until the
    // first task makes its last one. Only stepping happens in it (no task starts or ends), so
    // its CPU per step is the cost of a step alone.
    const mine = new Set(tokens);
    const counts = new Map<string, number>();
    let seen = 0;
    const steady: { from?: { at: number; cpu: ReturnType<typeof cpuSnapshot> }; to?: { at: number; cpu: ReturnType<typeof cpuSnapshot> } } = {};
    const watcher = setInterval(() => {
      for (; seen < model.requests.length; seen++) {
        const m = model.requests[seen].match;
        if (m && mine.has(m)) counts.set(m, (counts.get(m) ?? 0) + 1);
      }
      if (!steady.from && counts.size === tokens.length) steady.from = { at: Date.now(), cpu: cpuSnapshot(base.child.pid!) };
      if (steady.from && !steady.to && [...counts.values()].some((c) => c >= STEPS + 1)) steady.to = { at: Date.now(), cpu: cpuSnapshot(base.child.pid!) };
    }, 20);
    // Each client waits for its task's answer inline, as a user of send-message does (no polling load beside the steps).
    const started = await Promise.all(
      sessions.map((s, i) => api(base.baseUrl, 'POST', '/start/send-message', { key: s.key, body: { sessionId: s.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${tokens[i]} ${ACTION}`, startingUrl: `${fixtures.url}/${PAGE_OF_ACTION}` } } })),
    );
    started.forEach((r) => {
      if (!r.body.taskId) throw new Error(`newTask: ${r.status} ${r.text}`);
    });
    const ended = await Promise.all(
      started.map((r, i) =>
        waitFor(async () => {
          const t = await api(base.baseUrl, 'GET', `/task/${sessions[i].sessionId}/${r.body.taskId}`);
          return ['task_completed', 'failed', 'stopped'].includes(t.body.status) ? t.body : null;
        }, 180_000, 500).catch(async (err) => {
          const t = await api(base.baseUrl, 'GET', `/task/${sessions[i].sessionId}/${r.body.taskId}`);
          leaveOutput(base, JSON.stringify(t.body));
          throw err;
        }),
      ),
    );
    clearInterval(sampler);
    clearInterval(watcher);
    const cpu = cpuBetween(cpu0, cpuSnapshot(base.child.pid!));
    const wall = performance.now() - t0;
    const steps: number[] = [];
    // The k-th step of every task together: the first ones meet the other tasks' starts.
    const byIndex: number[][] = [];
    const firstCall: number[] = [];
    for (const t of tokens) {
      const at = (await recordedRequests(model.url, t)).map((r) => r.at);
      if (at.length) firstCall.push(at[0] - (t0 + performance.timeOrigin));
      for (let k = 1; k < at.length; k++) {
        steps.push(at[k] - at[k - 1]);
        (byIndex[k - 1] ??= []).push(at[k] - at[k - 1]);
      }
    }
    let steadyState: { ms: number; steps: number; cpuMsPerStep: Record<string, number>; cpuMsPerStepTotal: number } | undefined;
    if (steady.from && steady.to) {
      const { from, to } = steady;
      const n = model.requests.filter((r) => r.match && mine.has(r.match) && r.at > from.at && r.at <= to.at).length;
      const c = cpuBetween(from.cpu, to.cpu);
      if (n > 0) steadyState = { ms: to.at - from.at, steps: n, cpuMsPerStep: Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Math.round(v / n)])), cpuMsPerStepTotal: Math.round(Object.values(c).reduce((x, y) => x + y, 0) / n) };
    }
    const pictures = await picturesOf(started.map((r) => r.body.taskId as string));
    return { completed: ended.filter((e) => e.status === 'task_completed').length, steps, byIndex: byIndex.map(summary), firstCall: summary(firstCall), peakPss: peak, wallMs: Math.round(wall), cpu, steadyState, pictures, memorySamplingMs: Math.round(sampling) };
  };
  /** The recorded steps of the tasks: how many have a picture, and why the others have none. */
  const picturesOf = async (taskIds: string[]) => {
    const recorded = await mongo.db().collection('recording_steps').find({ taskId: { $in: taskIds } }, { projection: { pictureFileId: 1, pictureSkipped: 1 } }).toArray();
    const skipped: Record<string, number> = {};
    for (const r of recorded) {
      if (r.pictureFileId) continue;
      const why = String(r.pictureSkipped ?? 'none');
      skipped[why] = (skipped[why] ?? 0) + 1;
    }
    return { steps: recorded.length, taken: recorded.filter((r) => r.pictureFileId).length, skipped };
  };

  try {
    await new Promise((r) => setTimeout(r, 3000)); // the ready contexts are made
    const baseline = treePss(service.child.pid!);
    const startedAt = performance.now();
    const warm0 = cpuSnapshot(service.child.pid!);
    const sessions = await startSessions(CONCURRENT, service);
    // A new page keeps Chromium busy for about a second of CPU after it opened (more while
    // many open together): the tasks start once the stack is quiet, and that cost is told apart.
    const warmUp = await quiet(service.child.pid!);
    const warmCpu = cpuBetween(warm0, cpuSnapshot(service.child.pid!));
    const warmUpMs = Math.round(performance.now() - startedAt);
    const idle = treePss(service.child.pid!);
    // What open sessions cost while nobody uses them: CPU of the stack over 5 s.
    const idleCpu0 = cpuSnapshot(service.child.pid!);
    await new Promise((r) => setTimeout(r, 5000));
    const idleCpu = cpuBetween(idleCpu0, cpuSnapshot(service.child.pid!));
    const run = await runTasks(service, sessions, 'main');
    // The same sessions run a task again, now with memory sampled (its step times are not used).
    const measured = await runTasks(service, sessions, 'memory', { memory: true });
    await end(service, sessions);

    // The ramp: from few sessions at once to many, up to the first count whose step p95 passes 2 s.
    const ramp: { sessions: number; completed: number; stepMs: ReturnType<typeof summary>; pictures: { steps: number; taken: number; skipped: Record<string, number> } }[] = [];
    let sustained = 0;
    const levels = [...new Set([...RAMP, CONCURRENT])].sort((x, y) => x - y);
    for (const n of levels) {
      const r = n === CONCURRENT ? run : await (async () => {
        const more = await startSessions(n, service!);
        await quiet(service!.child.pid!);
        try {
          return await runTasks(service!, more, `ramp${n}`);
        } finally {
          await end(service!, more);
        }
      })();
      ramp.push({ sessions: n, completed: r.completed, stepMs: summary(r.steps), pictures: r.pictures });
      if (r.completed === n && pct(r.steps, 95)! <= LIMIT_MS) sustained = n;
      else break;
    }
    await service.stop();
    service = undefined;

    // Two worker processes on the same queue: where do sessions go?
    const a = await startService({ ...common, BROWSER_MAX_SESSIONS: '20' });
    const b = await startService({ ...common, BROWSER_MAX_SESSIONS: '20' });
    let spread: Record<string, number> = {};
    try {
      const two = await startSessions(10, a);
      // A session's record names its worker once the workflow marked it active (just after the answer).
      const recs = await waitFor(async () => {
        const found = await mongo.db().collection<{ _id: string; workerId?: string }>('sessions').find({ _id: { $in: two.map((s) => s.sessionId) } }).toArray();
        return found.every((r) => r.workerId) ? found : null;
      }, 15_000, 250).catch(() => mongo.db().collection<{ _id: string; workerId?: string }>('sessions').find({ _id: { $in: two.map((s) => s.sessionId) } }).toArray());
      spread = recs.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.workerId ?? 'none']: (acc[r.workerId ?? 'none'] ?? 0) + 1 }), {});
      await end(a, two);
    } finally {
      await a.stop();
      await b.stop();
    }

    const out = {
      benchmark: 'concurrency',
      machine: '2 cores, one worker process (API and worker in one process), Debian Chromium',
      concurrentSessions: CONCURRENT,
      stepsPerTask: STEPS,
      page: PAGE_OF_ACTION,
      stepAction: ACTION,
      tasksCompleted: run.completed,
      stepMs: summary(run.steps),
      stepMsByIndex: run.byIndex,
      // From the request that started a task to its first model call (opening the starting page and the first look).
      firstModelCallMs: run.firstCall,
      wallMs: run.wallMs,
      // Where the two cores went while the tasks ran: CPU ms per part of the stack, and per model call (step).
      cpuMs: run.cpu,
      cpuMsPerStep: Object.fromEntries(Object.entries(run.cpu).map(([k, v]) => [k, Math.round(v / (run.steps.length + sessions.length))])),
      // The same while every task is stepping and none starts or ends (see runTasks).
      steadyState: run.steadyState,
      // The tasks' recorded steps: how many got a picture, and why the others got none (unchanged: nothing visible changed; busy: the CPU was short).
      pictures: run.pictures,
      memorySamplingMs: measured.memorySamplingMs,
      // Opening the sessions, until the stack was quiet: wall time and CPU ms per session.
      sessionsWarmUp: { quiet: warmUp, ms: warmUpMs, cpuMsPerSession: Object.fromEntries(Object.entries(warmCpu).map(([k, v]) => [k, Math.round(v / CONCURRENT)])) },
      idleCpuMsPerSecond: Object.fromEntries(Object.entries(idleCpu).map(([k, v]) => [k, Math.round(v / 5)])),
      cpuUsedOfWall: Math.round((Object.values(run.cpu).reduce((x, y) => x + y, 0) / (run.wallMs * 2)) * 100) / 100,
      memoryMB: {
        baselineWithReadyContexts: mb(baseline),
        idleSessions: mb(idle),
        perIdleSession: mb((idle - baseline) / CONCURRENT),
        peakWhileActive: mb(measured.peakPss),
        perActiveSession: mb((measured.peakPss - baseline) / CONCURRENT),
      },
      ramp,
      sustainedConcurrentSessions: sustained,
      twoWorkers: { sessions: 10, perWorker: spread },
      stepPictures: process.env.BENCH_STEP_PICTURES === 'false' ? 'off' : EVERY_PICTURE ? 'every step that changed the view' : 'as shipped (every other step while the CPU is short)',
      users: ONE_USER ? 1 : 'one per session',
      target: { stepP95Ms: 1000, perIdleSessionMB: 120 },
    };
    fs.writeFileSync(process.env.BENCH_CONCURRENCY_OUT ?? path.join(ROOT, '.data/bench-concurrency.json'), JSON.stringify(out, null, 2));
  } finally {
    await service?.stop();
    await mongo.close();
    await fixtures.close();
    await model.close();
  }
}, 1_800_000);
