/**
 * The roles in separate processes on one machine: an API and two browser workers (ROLE=api,
 * ROLE=worker, dist/main.js), the scripted model and a page served here that counts its
 * clicks. Sessions spread over both workers by their free slots; a worker told to stop
 * (SIGTERM) mid-task hands its session to the other at once, the task completes with every
 * click made once and its wait for the new browser is reported; a rolling restart of every
 * worker keeps every task going. (A worker killed outright, SIGKILL: live-channel.test.ts,
 * 'sessions survive their worker'.)
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { MongoClient, type Db } from 'mongodb';
import { api, waitFor } from '../support/http';
import { allowedPort } from '../support/ports';
import { recordedRequests, registerScript } from '../support/scripted-model';
import { createUser, serviceEnv, startService, type ServiceProcess } from '../support/service';

const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}]`;

/**
 * A page whose button leads to /click?n=<n>, then to the page of the next click; the clicks
 * per n are counted (keyed `<s>:<n>` on the pages of a series, /page?s=<s>&n=<n>).
 */
async function startClickSite(): Promise<{ url: string; clicks: Map<string, number>; close(): Promise<void> }> {
  const clicks = new Map<string, number>();
  const query = (s: string | null, n: number) => (s ? `s=${s}&n=${n}` : `n=${n}`);
  const page = (s: string | null, n: number) => `<title>Clicks ${n - 1}</title><p>clicked ${n - 1} times</p><a href="/click?${query(s, n)}"><button>Click number ${n}</button></a>`;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const [s, n] = [url.searchParams.get('s'), Number(url.searchParams.get('n') ?? 1)];
    if (url.pathname === '/click') {
      const counted = s ? `${s}:${n}` : String(n);
      clicks.set(counted, (clicks.get(counted) ?? 0) + 1);
      return void res.writeHead(302, { location: `/page?${query(s, n + 1)}` }).end();
    }
    if (url.pathname !== '/page') return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(s, n));
  });
  await new Promise<void>((r) => server.listen(allowedPort(), '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, clicks, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

describe('an API and two browser workers in separate processes', () => {
  // (info: a case that fails prints what the processes logged about its session)
  const env = { REDIS_URL: `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/16`, TEMPORAL_TASK_QUEUE: `handover-${Date.now()}`, ORPHAN_GRACE_MS: '60000', LOG_LEVEL: 'info' };
  // Two slots each; a step is waited for up to 10 s when its worker stops. No case here waits
  // for a worker's entry to expire (a worker told to stop leaves the registry), so the TTL is
  // only how late a heartbeat may be: at 3 s, under the whole suite's load on two cores, the
  // fourth session of the first case found no live worker, in two clean-clone runs.
  const workerEnv = { ...env, ROLE: 'worker', BROWSER_MAX_SESSIONS: '2', WORKER_TTL_MS: '10000', SHUTDOWN_GRACE_MS: '10000' };
  let apiProc: ServiceProcess;
  const workers: ServiceProcess[] = [];
  let site: Awaited<ReturnType<typeof startClickSite>>;
  let mongo: MongoClient;
  let db: Db;
  let key: string;

  const idOf = (w: ServiceProcess) => /"workerId":"([^"]+)"/.exec(w.output())![1];
  const live = () => workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  const healthCount = async () => (await api(apiProc.baseUrl, 'GET', '/start/health')).body.instanceCount as number;
  const workerOf = async (sessionId: string) => (await db.collection<{ _id: string; workerId?: string; status: string }>('sessions').findOne({ _id: sessionId }))!;
  const events = async (sessionId: string): Promise<any[]> => (await api(apiProc.baseUrl, 'GET', `/start/sessions/${sessionId}/events?limit=500`, { key })).body.events ?? [];
  const send = (sessionId: string, message: Record<string, unknown>) => api(apiProc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message } });
  const taskEnd = (sessionId: string, taskId: string, ms: number) =>
    waitFor(async () => {
      const r = await api(apiProc.baseUrl, 'GET', `/task/${sessionId}/${taskId}`, { key });
      return r.body.status === 'task_completed' || r.body.status === 'failed' ? r.body : null;
    }, ms);
  /** The sessions the running test started: ended after it, passed or failed (one left over would take the next test's slots). */
  const started: string[] = [];
  const startSession = async (body: Record<string, unknown>) => {
    const answer = (await api(apiProc.baseUrl, 'POST', '/start/start-session', { key, body })).body;
    if (answer.sessionId) started.push(answer.sessionId);
    return answer;
  };
  afterEach(async () => {
    const ids = started.splice(0);
    for (const id of ids) await send(id, { actionType: 'state', newState: 'terminate' });
    await waitFor(async () => (await Promise.all(ids.map(workerOf))).every((s) => s.status === 'terminated'), 30_000).catch(() => undefined);
  });
  const addWorker = async () => {
    workers.push(await startService(workerEnv));
    await waitFor(async () => ((await healthCount()) === live().length ? true : null), 20_000);
  };

  beforeAll(async () => {
    site = await startClickSite();
    mongo = await MongoClient.connect(serviceEnv().MONGODB_URL);
    db = mongo.db();
    [apiProc] = await Promise.all([startService({ ...env, ROLE: 'api', RATE_LIMIT_PER_MINUTE: '1000' }), ...[0, 1].map(async () => workers.push(await startService(workerEnv)))]);
    await waitFor(async () => ((await healthCount()) === 2 ? true : null), 20_000);
    ({ apiKey: key } = await createUser({ balance: 10, sessionLimit: 6 }));
  }, 180_000);
  afterAll(async () => {
    await Promise.all([apiProc?.stop(), ...workers.map((w) => w.stop('SIGKILL'))]);
    if (process.env.HANDOVER_LOGS) [apiProc, ...workers].forEach((p, i) => p && fs.writeFileSync(path.join(process.env.HANDOVER_LOGS!, `process-${i}.log`), p.output()));
    await mongo?.close();
    await site?.close();
  });

  it('spreads sessions over both workers by their free slots', async () => {
    // One after the other, each active before the next is asked for.
    const ids: string[] = [];
    const placed: (string | undefined)[] = [];
    for (let i = 0; i < 4; i++) {
      const id: string = (await startSession({})).sessionId;
      ids.push(id);
      // The cap is for a worker that never takes the session. Alone a session is active in
      // about 4 s; on two cores shared with another end-to-end file, one took over 30 s, and
      // once one was not active within 60 s (its lines are printed if that happens again).
      placed.push(await activeOn(id, 90_000));
    }
    const perWorker = Object.fromEntries(workers.map((w) => [idOf(w), placed.filter((p) => p === idOf(w)).length]));
    process.stdout.write(`four sessions on two workers of two slots each: ${JSON.stringify(perWorker)}\n`);
    expect(Object.values(perWorker)).toEqual([2, 2]);
  }, 200_000);

  it("moves a session to the other worker at once when its worker is told to stop mid-task; every click happens once and the wait is reported", async () => {
    const t = token('handover');
    await registerScript(model(), {
      match: t,
      steps: [
        // The first click is decided slowly: the worker is told to stop while this step runs.
        { tool: 'click_element', args: { index: { ref: 'Click number 1' } }, delayMs: 2500 },
        { tool: 'click_element', args: { index: { ref: 'Click number 2' } } },
        { tool: 'done', args: { message: 'clicked twice' } },
      ],
    });
    const started = await startSession({ task: { prompt: `${t} click twice`, startingUrl: `${site.url}/page?n=1` } });
    const { sessionId, taskId } = started;
    await waitFor(async () => ((await recordedRequests(model(), t)).length >= 1 ? true : null), 30_000);
    const holder = await holderOf(sessionId);
    const other = live().find((w) => w !== holder)!;
    const stoppedAt = Date.now();
    const exited = holder.stop('SIGTERM');

    const done = await taskEnd(sessionId, taskId, 60_000);
    const reconnected = (await events(sessionId)).find((e) => e.event === 'instance:reconnected');
    const handoverMs = reconnected ? reconnected.timestamp - stoppedAt : null;
    process.stdout.write(`SIGTERM to the session active on the other worker: ${handoverMs} ms; reported wait ${reconnected?.waitedMs} ms\n`);
    if (done.status !== 'task_completed') process.stdout.write(`${JSON.stringify(done)}\n${JSON.stringify(await events(sessionId))}\n${holder.output().slice(-3000)}\n`);
    expect({ status: done.status, clicks: Object.fromEntries(site.clicks), worker: (await workerOf(sessionId)).workerId }).toEqual({ status: 'task_completed', clicks: { 1: 1, 2: 1 }, worker: idOf(other) });
    // Moved by the hand-over, not by a lease that timed out (a killed worker's move says no handedOver);
    // how long it took is a figure, not a bound: on a loaded machine it varies 3 to 14 s.
    expect(reconnected).toMatchObject({ handedOver: true, workerId: idOf(other), waitedMs: expect.any(Number) });
    expect(await exited).toBe(0);
  }, 120_000);

  it('keeps every task going through a rolling restart of every worker: no task fails, no click is made twice, no session is lost, each move reports its wait', async () => {
    while (live().length < 2) await addWorker();
    const tasks = await startClickingTasks(['a', 'b']);
    const clicksOf = (series: string) => [...site.clicks.keys()].filter((k) => k.startsWith(`${series}:`)).length;
    const clickedOnMore = (since: number[]) => waitFor(async () => tasks.every((t, i) => clicksOf(t.series) > since[i]) || null, 40_000);
    await clickedOnMore(tasks.map(() => 0));

    // Each worker in turn is told to stop, its replacement started at once; the tasks click on.
    const moves: { sessionId: string; signalAt: number; reconnected: any }[] = [];
    for (const old of live()) {
      const held = (await Promise.all(tasks.map(async (t) => ((await workerOf(t.sessionId)).workerId === idOf(old) ? [t] : [])))).flat();
      const before = tasks.map((t) => clicksOf(t.series));
      const signalAt = Date.now();
      const [exitCode] = await Promise.all([old.stop('SIGTERM'), addWorker()]);
      expect(exitCode).toBe(0);
      for (const t of held) moves.push({ sessionId: t.sessionId, signalAt, reconnected: await waitFor(async () => (await events(t.sessionId)).find((e) => e.event === 'instance:reconnected' && e.timestamp >= signalAt), 30_000) });
      await clickedOnMore(before);
    }
    for (const m of moves) {
      const left = (await events(m.sessionId)).find((e) => e.event === 'instance:disconnected' && e.timestamp >= m.signalAt);
      process.stdout.write(`rolling restart, SIGTERM to the session's browser let go ${left?.timestamp - m.signalAt} ms, to the session active on another worker ${m.reconnected.timestamp - m.signalAt} ms; reported wait ${m.reconnected.waitedMs} ms\n`);
    }

    // The tasks end, each reading its page: every click made once, in order, and the page shows them all.
    for (const t of tasks) await registerScript(model(), { match: t.match, steps: [{ tool: 'done', args: { message: 'The page says {{find:(clicked \\d+ times)}}' } }] });
    const ends = await Promise.all(tasks.map((t) => taskEnd(t.sessionId, t.taskId, 60_000)));
    const newIds = live().map(idOf);
    for (const [i, t] of tasks.entries()) {
      const made = [...site.clicks].filter(([k]) => k.startsWith(`${t.series}:`));
      const all = await events(t.sessionId);
      expect({ status: ends[i].status, message: ends[i].data?.message, clicks: made }).toEqual({ status: 'task_completed', message: `The page says clicked ${made.length} times`, clicks: made.map((_, j) => [`${t.series}:${j + 1}`, 1]) });
      // Not lost: active on a worker started during the restart; each of its moves reported with its wait.
      const { status, workerId } = await workerOf(t.sessionId);
      expect({ status, onNewWorker: newIds.includes(workerId!) }).toEqual({ status: 'active', onNewWorker: true });
      const reconnects = all.filter((e) => e.event === 'instance:reconnected');
      expect(reconnects).toEqual(moves.filter((m) => m.sessionId === t.sessionId).map(() => expect.objectContaining({ handedOver: true, waitedMs: expect.any(Number) })));
      expect(all.filter((e) => e.event === 'instance:disconnected')).toHaveLength(reconnects.length);
    }
    expect(moves.length).toBeGreaterThanOrEqual(tasks.length);
  }, 240_000);

  /** A session per series, one after the other, each with a task that clicks on (a click a second) until its script is told to end it. */
  async function startClickingTasks(series: string[]) {
    const tasks: { series: string; match: string; sessionId: string; taskId: string }[] = [];
    for (const s of series) {
      const match = token(`rolling-${s}`);
      await registerScript(model(), { match, steps: [{ tool: 'click_element', args: { index: { ref: 'Click number' } }, delayMs: 1000 }] });
      const body = { task: { prompt: `${match} click on`, startingUrl: `${site.url}/page?s=${s}&n=1` } };
      const { sessionId, taskId } = await startSession(body);
      tasks.push({ series: s, match, sessionId, taskId });
      await waitFor(async () => ((await workerOf(sessionId)).status === 'active' ? true : null), 30_000);
    }
    return tasks;
  }

  /**
   * The worker a session became active on. One that ends instead, or is not active in time,
   * fails the case with its status and every line the processes logged about it.
   */
  async function activeOn(sessionId: string, ms: number): Promise<string> {
    const said = () => [apiProc, ...workers].flatMap((p) => p.output().split('\n').filter((l) => l.includes(sessionId))).join('\n');
    const record = await waitFor(async () => {
      const s = await workerOf(sessionId);
      return s.status === 'active' || ['failed', 'terminated', 'expired', 'completed'].includes(s.status) ? s : null;
    }, ms).catch(async (err) => {
      throw new Error(`${String(err)}; status ${(await workerOf(sessionId)).status}\n${said()}`);
    });
    if (record.status !== 'active') throw new Error(`session ${sessionId} ended as ${record.status} before it was active\n${said()}`);
    return record.workerId!;
  }

  async function holderOf(sessionId: string): Promise<ServiceProcess> {
    const { workerId } = await workerOf(sessionId);
    return workers.find((w) => idOf(w) === workerId)!;
  }
});
