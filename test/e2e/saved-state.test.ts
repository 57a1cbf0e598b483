/**
 * What a session saves to come back elsewhere (a hibernation, a restore after its worker is
 * lost) keeps its promises: the values it masks come back with it, a saved form value goes
 * back only into a page of the site it was typed on, and nothing it saved outlives it or sits
 * in the database in clear. Sites of the test's own on allowed loopback ports, the scripted
 * model, and services started here (one with idle discards; an API with two browser workers;
 * an API, a workflow worker and one browser worker). The last also shows what a session at
 * work meets when its only worker dies for good: its watchers are told, input is refused while
 * no worker holds its browser, and after the grace period it ends instance_lost.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient, type Db } from 'mongodb';
import { api, waitFor } from '../support/http';
import { allowedPort } from '../support/ports';
import { recordedRequests, registerScript, requestText } from '../support/scripted-model';
import { createUser, serviceEnv, startService, temporalClient, type ServiceProcess } from '../support/service';
import { connectSession } from '../support/socket';

const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e9).toString(36)}`;

interface Site {
  url: string;
  port: number;
  hits: URL[];
  /** Pages answered per path; a path may be changed while the test runs. */
  pages: Record<string, (u: URL) => string | { redirect: string }>;
  close(): Promise<void>;
}

async function startSite(pages: Site['pages'] = {}): Promise<Site> {
  const hits: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.push(url);
    const page = site.pages[url.pathname];
    if (!page) return void res.writeHead(404).end('not found');
    const answer = page(url);
    if (typeof answer !== 'string') return void res.writeHead(302, { location: answer.redirect }).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(answer);
  });
  await new Promise<void>((r) => server.listen(allowedPort(), '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const site: Site = { url: `http://127.0.0.1:${port}`, port, hits, pages, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
  return site;
}

/** Every part of 8 characters of `value` that shows up in `text`, also URL-decoded. */
function partsIn(text: string, value: string): string[] {
  let decoded = text;
  try {
    decoded = decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    /* as it is */
  }
  const hay = `${text}\n${decoded}`.toLowerCase();
  const found: string[] = [];
  for (let i = 0; i + 8 <= value.length; i++) if (hay.includes(value.slice(i, i + 8).toLowerCase())) found.push(value.slice(i, i + 8));
  return found;
}

/**
 * A page with an API key field and a PIN field (at a fixed place, for a click by hand), whose
 * values the page shows as they are typed; a form sent to /save.
 */
const keysPage = () =>
  '<title>Keys</title><body style="margin:0"><form action="/save">' +
  '<p style="position:absolute;left:10px;top:10px;margin:0"><label for="p">PIN</label> <input id="p" name="p" type="password" style="width:300px;height:40px"></p>' +
  '<p style="margin-top:90px"><label for="k">API key</label> <input id="k" name="k"></p><p><button>Save</button></p></form>' +
  '<p id="shown">nothing typed</p>' +
  "<script>const show = () => (document.getElementById('shown').textContent = 'key: ' + document.getElementById('k').value + ' pin: ' + document.getElementById('p').value);" +
  "document.addEventListener('input', show);</script></body>";

async function events(baseUrl: string, key: string, sessionId: string): Promise<any[]> {
  return (await api(baseUrl, 'GET', `/start/sessions/${sessionId}/events?limit=500`, { key })).body.events ?? [];
}

/** A session's task ran to its end (completed or failed). */
async function taskEnd(baseUrl: string, key: string, sessionId: string, taskId: string, ms = 90_000): Promise<any> {
  return waitFor(async () => {
    const r = await api(baseUrl, 'GET', `/task/${sessionId}/${taskId}`, { key });
    return r.body.status === 'task_completed' || r.body.status === 'failed' ? r.body : null;
  }, ms);
}

const sent = async (t: string) => (await recordedRequests(model(), t)).map(requestText).join('\n');

/** By hand: take over, click the PIN field, type into it, (send the form,) give control back. */
async function typePinByHand(send: (m: Record<string, unknown>) => Promise<{ status: number }>, pin: string, submit = false): Promise<void> {
  const steps: Record<string, unknown>[] = [
    { type: 'takeOverControl' },
    // The API's y is the page's plus 155 (the live view's header).
    { type: 'CLICK', x: 150, y: 30 + 155 },
    { type: 'TYPE', text: pin },
    ...(submit ? [{ type: 'KEY_PRESS', key: 'Enter' }] : []),
    { type: 'releaseControl' },
  ];
  for (const action of steps) expect((await send({ actionType: 'interaction', action })).status).toBe(200);
}

describe('a session that sleeps (idle discard)', () => {
  let svc: ServiceProcess;
  let a: Site;
  let b: Site;
  beforeAll(async () => {
    svc = await startService({ SESSION_IDLE_DISCARD_MS: '2500' });
    b = await startSite({
      // Another site, whose form has the same shape as A's signup page: it reports every value it is given.
      '/catch.html': () =>
        '<title>Other site</title><body><form><p><label for="n">Nickname</label> <input id="n"></p><p><label for="w">Password</label> <input id="w" type="password"></p></form>' +
        "<script>document.addEventListener('input', (e) => fetch('/got?v=' + encodeURIComponent(e.target.value)));</script></body>",
      '/got': () => 'ok',
    });
    a = await startSite({
      '/keys.html': keysPage,
      '/signup.html': () => '<title>Sign up</title><body><form><p><label for="n">Nickname</label> <input id="n"></p><p><label for="w">Password</label> <input id="w" type="password"></p></form></body>',
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await a?.close();
    await b?.close();
  });

  /** Waits until the session let its browser go (again) after the last thing done in it. */
  const asleep = (key: string, sessionId: string) =>
    waitFor(async () => {
      const all = await events(svc.baseUrl, key, sessionId);
      const slept = all.filter((e) => e.type === 'session_hibernated').length;
      return slept > all.filter((e) => e.type === 'session_resumed').length ? true : null;
    }, 30_000);

  it("masks an earlier task's secret and a PIN typed by hand after the session wakes: the restored form shows them to nobody", async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const KEY = unique('sk-live-EarlierTaskKey');
    const PIN = unique('Hand-Typed-Pin');
    const [t0, t1, t2] = [token('mask-idle'), token('mask-one'), token('mask-two')];
    await registerScript(model(), { match: t0, steps: [{ tool: 'done', args: { message: 'ok' } }] });
    await registerScript(model(), {
      match: t1,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'API key' }, text: '<secret>apiKey</secret>' } },
        { tool: 'done', args: { message: 'typed' } },
      ],
    });
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: 'The page shows {{find:(key: \\S* pin: \\S*)}}' } }] });
    const { sessionId } = (await api(svc.baseUrl, 'POST', '/start/start-session', { key, body: {} })).body;
    const send = (message: Record<string, unknown>) => api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message } });
    const first = await send({ actionType: 'newTask', newState: 'start', prompt: `${t1} type the key`, startingUrl: `${a.url}/keys.html`, secrets: [{ match: `127.0.0.1:${a.port}`, fields: { apiKey: KEY } }] });
    expect(first.body).toMatchObject({ type: 'task_completed' });
    await typePinByHand(send, PIN);
    // (an idle session's discard is timed from its last task)
    expect((await send({ actionType: 'newTask', newState: 'start', prompt: `${t0} nothing more` })).body).toMatchObject({ type: 'task_completed' });
    await asleep(key, sessionId);

    // The next task (no secrets of its own) wakes it on the same page, its fields filled again.
    const second = await send({ actionType: 'newTask', newState: 'start', prompt: `${t2} what does the page show` });
    const done = second.body.type === 'task_completed' ? second.body : await taskEnd(svc.baseUrl, key, sessionId, second.body.taskId);
    const message: string = done.data?.message ?? done.message;
    process.stdout.write(`after the wake the model read: ${message}\n`);
    expect(message).toMatch(/^The page shows key: /);
    const toModel = await sent(t2);
    expect({ key: partsIn(toModel, KEY), pin: partsIn(toModel, PIN) }).toEqual({ key: [], pin: [] });
    const timeline = JSON.stringify(await events(svc.baseUrl, key, sessionId));
    expect({ key: partsIn(timeline, KEY), pin: partsIn(timeline, PIN) }).toEqual({ key: [], pin: [] });
    await send({ actionType: 'state', newState: 'terminate' });
  });

  it('puts saved form values back only into a page of the site they were typed on; the model is told what was not restored', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const PASSWORD = unique('Pw-SignupSecret');
    const [t1, t2] = [token('origin-one'), token('origin-two')];
    await registerScript(model(), {
      match: t1,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Nickname' }, text: 'ada-lovelace' } },
        { tool: 'input_text', args: { index: { ref: 'Password' }, text: PASSWORD } },
        { tool: 'done', args: { message: 'filled' } },
      ],
    });
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: '{{find:(were not put back)}}' } }] });
    const { sessionId } = (await api(svc.baseUrl, 'POST', '/start/start-session', { key, body: {} })).body;
    const send = (message: Record<string, unknown>) => api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message } });
    expect((await send({ actionType: 'newTask', newState: 'start', prompt: `${t1} fill in the form`, startingUrl: `${a.url}/signup.html` })).body).toMatchObject({ type: 'task_completed' });
    await asleep(key, sessionId);

    // While it sleeps, A's page sends its visitors to another site, whose form looks the same.
    a.pages['/signup.html'] = () => ({ redirect: `${b.url}/catch.html` });
    const second = await send({ actionType: 'newTask', newState: 'start', prompt: `${t2} go on` });
    const done = second.body.type === 'task_completed' ? second.body : await taskEnd(svc.baseUrl, key, sessionId, second.body.taskId);
    expect(b.hits.some((h) => h.pathname === '/catch.html')).toBe(true);
    const given = b.hits.filter((h) => h.pathname === '/got').map((h) => h.searchParams.get('v'));
    process.stdout.write(`the other site was given: ${JSON.stringify(given)}\n`);
    expect(given).toEqual([]);
    expect(done.data?.message ?? done.message).toBe('were not put back');
    expect(await sent(t2)).toContain(`${a.url}/signup.html: the tab now shows ${b.url}/catch.html`);
    await send({ actionType: 'state', newState: 'terminate' });
  });
  it("opens a woken session's saved pages under its policy: a page that now sends it to a site the policy does not allow takes it nowhere", async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const policy = (await api(svc.baseUrl, 'POST', '/policies', { key, body: { name: 'only A', domainRules: { mode: 'allowlist', domains: [`127.0.0.1:${a.port}`] } } })).body.policy;
    const [t1, t2] = [token('guard-one'), token('guard-two')];
    await registerScript(model(), {
      match: t1,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Nickname' }, text: 'grace-hopper' } },
        { tool: 'done', args: { message: 'filled' } },
      ],
    });
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: 'ok' } }] });
    a.pages['/guarded.html'] = a.pages['/signup.html'];
    const { sessionId } = (await api(svc.baseUrl, 'POST', '/start/start-session', { key, body: { policyId: policy._id } })).body;
    const send = (message: Record<string, unknown>) => api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message } });
    expect((await send({ actionType: 'newTask', newState: 'start', prompt: `${t1} fill in the form`, startingUrl: `${a.url}/guarded.html` })).body).toMatchObject({ type: 'task_completed' });
    await asleep(key, sessionId);

    // While it sleeps, A's page sends its visitors on to another site as soon as it loads.
    a.pages['/guarded.html'] = () => `<title>Moved</title><p>Moved.</p><script>location.href = '${b.url}/catch.html?from=guarded';</script>`;
    const second = await send({ actionType: 'newTask', newState: 'start', prompt: `${t2} go on` });
    const done = second.body.type === 'task_completed' ? second.body : await taskEnd(svc.baseUrl, key, sessionId, second.body.taskId);
    const reached = b.hits.filter((h) => h.searchParams.get('from') === 'guarded' || h.pathname === '/got').map((h) => `${h.pathname}${h.search}`);
    process.stdout.write(`under the policy the other site was reached with: ${JSON.stringify(reached)}\n`);
    expect(reached).toEqual([]);
    expect(done.data?.message ?? done.message).toBe('ok');
    await send({ actionType: 'state', newState: 'terminate' });
  });
});

describe('a session restored on another worker', () => {
  const env = { REDIS_URL: `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/14`, TEMPORAL_TASK_QUEUE: `masks-move-${Date.now()}` };
  let apiProc: ServiceProcess;
  const workers: ServiceProcess[] = [];
  let site: Site;
  const saved = new Map<string, string>();
  beforeAll(async () => {
    site = await startSite({
      '/keys.html': keysPage,
      // (answered with a redirect: no address the session is on holds the values)
      '/save': (u) => {
        for (const [k, v] of u.searchParams) saved.set(k, v);
        return { redirect: '/saved.html' };
      },
      '/saved.html': () => '<title>Saved</title><p>Saved.</p>',
      '/show.html': () => `<title>Saved values</title><p>saved key: ${saved.get('k') ?? ''} pin: ${saved.get('p') ?? ''}</p>`,
    });
    [apiProc] = await Promise.all([startService({ ROLE: 'api', ...env, ORPHAN_GRACE_MS: '60000' }), ...[0, 1].map(async () => workers.push(await startService({ ROLE: 'worker', ...env, WORKER_TTL_MS: '3000' })))]);
    await waitFor(async () => ((await api(apiProc.baseUrl, 'GET', '/start/health')).body.instanceCount === 2 ? true : null), 20_000);
  });
  afterAll(async () => {
    await Promise.all([apiProc?.stop(), ...workers.map((w) => w.stop('SIGKILL'))]);
    await site?.close();
  });

  it("masks an earlier task's secret and a PIN typed by hand on the worker that takes the session over", async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const KEY = unique('sk-live-MovedTaskKey');
    const PIN = unique('Hand-Typed-Moved-Pin');
    const [t1, t2] = [token('move-one'), token('move-two')];
    await registerScript(model(), {
      match: t1,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'API key' }, text: '<secret>apiKey</secret>' } },
        { tool: 'done', args: { message: 'typed' } },
      ],
    });
    await registerScript(model(), {
      match: t2,
      steps: [
        { tool: 'navigate', args: { url: `${site.url}/show.html` } },
        { tool: 'done', args: { message: 'The page shows {{find:(saved key: \\S* pin: \\S*)}}' } },
      ],
    });
    const { sessionId } = (await api(apiProc.baseUrl, 'POST', '/start/start-session', { key, body: {} })).body;
    const send = (message: Record<string, unknown>) => api(apiProc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message } });
    const first = await send({ actionType: 'newTask', newState: 'start', prompt: `${t1} type the key`, startingUrl: `${site.url}/keys.html`, secrets: [{ match: `127.0.0.1:${site.port}`, fields: { apiKey: KEY } }] });
    expect(first.body).toMatchObject({ type: 'task_completed' });
    // The person types the PIN and sends the form: the site keeps both values and shows them later.
    await typePinByHand(send, PIN, true);
    await waitFor(async () => (saved.get('p') === PIN ? true : null), 10_000);

    const temporal = await temporalClient();
    const view = await temporal.client.workflow.getHandle(`session-${sessionId}`).query<{ workerId: string }>('session');
    await temporal.close();
    const holder = workers.find((w) => w.output().includes(view.workerId));
    expect(holder).toBeDefined();
    holder!.child.kill('SIGKILL');

    const second = await send({ actionType: 'newTask', newState: 'start', prompt: `${t2} show the saved values` });
    const done = second.body.type === 'task_completed' ? second.body : await taskEnd(apiProc.baseUrl, key, sessionId, second.body.taskId);
    const message: string = done.data?.message ?? done.message;
    process.stdout.write(`after the move the model read: ${message}\n`);
    expect(message).toMatch(/^The page shows saved key: /);
    const toModel = await sent(t2);
    expect({ key: partsIn(toModel, KEY), pin: partsIn(toModel, PIN) }).toEqual({ key: [], pin: [] });
    const timeline = JSON.stringify(await events(apiProc.baseUrl, key, sessionId));
    expect({ key: partsIn(timeline, KEY), pin: partsIn(timeline, PIN) }).toEqual({ key: [], pin: [] });
    await send({ actionType: 'state', newState: 'terminate' });
  }, 240_000);
});

describe('saved browser state ends with its session', () => {
  const env = { REDIS_URL: `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/15`, TEMPORAL_TASK_QUEUE: `saved-state-${Date.now()}`, SESSION_IDLE_DISCARD_MS: '8000' };
  let mongo: MongoClient;
  let db: Db;
  let site: Site;
  beforeAll(async () => {
    mongo = await MongoClient.connect(serviceEnv().MONGODB_URL);
    db = mongo.db();
    site = await startSite({});
  });
  afterAll(async () => {
    await mongo?.close();
    await site?.close();
  });

  const doc = (collection: string, id: string) => db.collection<{ _id: string }>(collection).findOne({ _id: id });

  /** A session whose task is at work (a step every second or so), watched over the live channel. */
  const startWorking = async (baseUrl: string, key: string) => {
    const t = token('at-work');
    await registerScript(model(), { match: t, steps: [{ tool: 'wait', args: { seconds: 0.5 }, delayMs: 300 }] });
    const s = (await api(baseUrl, 'POST', '/start/start-session', { key, body: { task: { prompt: `${t} keep going` } } })).body as { sessionId: string; taskId: string };
    const live = await connectSession(baseUrl, { sessionId: s.sessionId });
    await live.waitFor((r) => r.payload?.type === 'action', 30_000);
    return { ...s, live };
  };

  /** The session at work once its only worker is gone for good: told, input refused meanwhile, then instance_lost with its task failed. */
  const lostAtWork = async (baseUrl: string, key: string, working: Awaited<ReturnType<typeof startWorking>>) => {
    await working.live.waitFor((r) => r.event === 'instance:disconnected', 30_000);
    const click = await api(baseUrl, 'POST', '/start/send-message', { key, body: { sessionId: working.sessionId, message: { actionType: 'interaction', action: { type: 'CLICK', x: 100, y: 300 } } } });
    expect([click.status, click.body.code]).toEqual([503, 'INSTANCE_UNAVAILABLE']);
    const end = await working.live.waitFor((r) => r.event === 'end_session', 30_000);
    expect(end.payload.reason).toBe('instance_lost');
    const task = await api(baseUrl, 'GET', `/task/${working.sessionId}/${working.taskId}`);
    expect(task.body).toMatchObject({ success: false, status: 'failed', code: 'INSTANCE_LOST' });
    working.live.socket.close();
  };
  const savedState = async (id: string) => ({ snapshot: !!(await doc('browserSnapshots', id)), hibernation: !!(await doc('hibernations', id)), masks: !!(await doc('sessionMasks', id)) });

  it('keeps cookies sealed, one copy while asleep, and removes all of it when the session ends without its worker (one at work ends instance_lost after the grace period, its task failed with a clear code); leftovers are swept', async () => {
    const COOKIE = unique('CookieValueInClear');
    site.pages['/cookie.html'] = () => `<title>Cookie</title><p>cookie set</p><script>document.cookie = 'tok=${COOKIE}; max-age=3600'; localStorage.setItem('tok', '${COOKIE}');</script>`;
    // The workflows on their own worker: they go on when the only browser worker dies.
    const [apiProc, workflows, worker] = await Promise.all([
      startService({ ROLE: 'api', ...env, ORPHAN_GRACE_MS: '4000', INLINE_WAIT_MS: '1000', SESSION_SWEEP_INTERVAL_MS: '1000' }),
      startService({ ROLE: 'workflows', ...env, ORPHAN_GRACE_MS: '4000' }),
      startService({ ROLE: 'worker', ...env, WORKER_TTL_MS: '3000' }),
    ]);
    try {
      await waitFor(async () => ((await api(apiProc.baseUrl, 'GET', '/start/health')).body.instanceCount === 1 ? true : null), 20_000);
      const { apiKey: key } = await createUser({ balance: 10, sessionLimit: 5 });
      const [t1, t2] = [token('kept-one'), token('kept-two')];
      for (const t of [t1, t2]) await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'ok' } }] });
      const start = async (t: string) => {
        const s = (await api(apiProc.baseUrl, 'POST', '/start/start-session', { key, body: { task: { prompt: `${t} look`, startingUrl: `${site.url}/cookie.html` } } })).body;
        await taskEnd(apiProc.baseUrl, key, s.sessionId, s.taskId);
        return s.sessionId as string;
      };
      const sleeper = await start(t1);
      // The snapshot taken for a restore elsewhere holds the cookie and the storage, sealed.
      const snapshot = await waitFor(() => doc('browserSnapshots', sleeper), 15_000);
      const seen: Record<string, unknown> = { cookieInClear: partsIn(JSON.stringify(snapshot), COOKIE).length > 0 };
      // Asleep: the sealed hibernation record is the one copy.
      await waitFor(async () => ((await events(apiProc.baseUrl, key, sleeper)).some((e) => e.type === 'session_hibernated') ? true : null), 30_000);
      seen.whileAsleep = await savedState(sleeper);

      const working = await startWorking(apiProc.baseUrl, key);
      const holding = await start(t2);
      await waitFor(() => doc('browserSnapshots', holding), 15_000);
      // The only browser worker dies: the session at work, the session it held and the sleeping one (asked to wake) all end as instance_lost.
      worker.child.kill('SIGKILL');
      await lostAtWork(apiProc.baseUrl, key, working);
      await api(apiProc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId: sleeper, message: { actionType: 'newTask', newState: 'start', prompt: `${t1} again` } } });
      for (const id of [holding, sleeper]) {
        await waitFor(async () => ((await db.collection<{ _id: string; status: string }>('sessions').findOne({ _id: id }))?.status === 'failed' ? true : null), 60_000);
      }
      seen.afterTheEnd = { holding: await savedState(holding), sleeper: await savedState(sleeper) };

      // What a session left behind (its end never ran) is swept once it is old.
      const left = unique('sess_leftover');
      const takenAt = new Date(Date.now() - 60 * 60 * 1000);
      for (const name of ['browserSnapshots', 'hibernations', 'sessionMasks']) await db.collection<{ _id: string }>(name).insertOne({ _id: left, sealed: 'x', takenAt } as { _id: string });
      const sweptAt = Date.now() + 10_000;
      while (Date.now() < sweptAt && Object.values(await savedState(left)).some(Boolean)) await new Promise((r) => setTimeout(r, 500));
      seen.leftoverAfter10s = await savedState(left);
      process.stdout.write(`saved state: ${JSON.stringify(seen)}\n`);
      const none = { snapshot: false, hibernation: false, masks: false };
      expect(seen).toEqual({
        cookieInClear: false,
        whileAsleep: { snapshot: false, hibernation: true, masks: false },
        afterTheEnd: { holding: none, sleeper: none },
        leftoverAfter10s: none,
      });
    } finally {
      await Promise.all([apiProc.stop(), workflows.stop(), worker.stop('SIGKILL')]);
    }
  }, 300_000);
});
