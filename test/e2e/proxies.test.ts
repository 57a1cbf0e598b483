/**
 * Proxies per session: a user's own HTTP or SOCKS proxy (credentials kept from Chromium and
 * from every record), the operator's managed pool by country (bytes metered at the relay and
 * charged), and clear failures for a dead or refusing proxy.
 */
import { MongoClient, type Db } from 'mongodb';
import { api, waitFor } from '../support/http';
import { registerScript } from '../support/scripted-model';
import { allCommandLines, startHttpProxy, startSocksProxy } from '../support/test-proxies';
import { allowedPort } from '../support/ports';
import { createUser, startService, type ServiceProcess } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
const fixtureHost = () => new URL(fixtures()).host;

let mongo: MongoClient;
let db: Db;
beforeAll(async () => {
  mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test');
  db = mongo.db();
});
afterAll(() => mongo.close());

const runTask = (baseUrl: string, key: string, body: Record<string, unknown>) => api(baseUrl, 'POST', '/start/run-task', { key, body });
async function finished(baseUrl: string, res: { body: any }): Promise<any> {
  if (res.body.type === 'task_completed' || res.body.status === 'failed') return res.body;
  return waitFor(async () => {
    const r = await api(baseUrl, 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`);
    return ['task_completed', 'failed'].includes(r.body.type ?? r.body.status) ? r.body : null;
  }, 60_000);
}

describe('proxy validation', () => {
  it.each([
    [{ source: 'mine' }, 'proxy.source'],
    [{ source: 'custom', type: 'ftp', host: 'proxy.example', port: '8080' }, 'proxy.type'],
    [{ source: 'custom', type: 'http', host: 'proxy.example', port: '0' }, 'proxy.port'],
    [{ source: 'custom', type: 'http', host: 'proxy.example', port: '70000' }, 'proxy.port'],
    [{ source: 'custom', type: 'http', host: 'proxy.example', port: 8080 }, 'proxy.port'],
    [{ source: 'custom', type: 'http', port: '8080' }, 'proxy.host'],
    [{ source: 'custom', type: 'http', host: 'proxy.example', port: '8080', level: 'kernel' }, 'proxy.level'],
    [{ source: 'custom', type: 'http', host: '10.0.0.5', port: '3128' }, 'proxy.host'],
    [{ source: 'Service', country: 'XX' }, 'proxy.country'],
    [{ source: 'Service' }, 'proxy.country'],
    [{ source: 'Service', country: 'DE', extra: 1 }, 'proxy'],
  ])('%j is a 400 naming %s', async (proxy, field) => {
    const { apiKey: key } = await createUser();
    const res = await api(base(), 'POST', '/start/start-session', { key, body: { proxy } });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(String(res.body.details?.parameter ?? res.body.details?.field)).toBe(field);
  });

  it('a managed proxy where the operator configured none is a 400 saying so', async () => {
    const { apiKey: key } = await createUser();
    const res = await api(base(), 'POST', '/start/start-session', { key, body: { proxy: { source: 'Service', country: 'random' } } });
    expect(res.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'proxy.source' }, message: expect.stringContaining('No managed proxies are configured') });
  });
});

describe('a custom proxy', () => {
  it.each(['http', 'socks'] as const)('%s: every request of the session goes through it with its credentials, which reach neither Chromium nor any record', async (type) => {
    const password = `pw-${type}-${Date.now()}-secret`;
    const proxy = type === 'http' ? await startHttpProxy('agent', password) : await startSocksProxy('agent', password);
    try {
      const t = token(`proxy-${type}`);
      await registerScript(model(), { match: t, steps: [{ tool: 'navigate', args: { url: `${fixtures()}/about.html` } }, { tool: 'done', args: { message: '{{find:(About[^\\n"]*)}}' } }] });
      const { apiKey: key } = await createUser();
      const started = await api(base(), 'POST', '/start/start-session', {
        key,
        body: { proxy: { source: 'custom', type, host: '127.0.0.1', port: String(proxy.port), username: 'agent', password }, task: { prompt: `${t} go`, startingUrl: `${fixtures()}/index.html` } },
      });
      expect(started.status).toBe(200);
      // while the browser runs: no process's command line carries the password
      expect(await allCommandLines()).not.toContain(password);
      const outcome = await finished(base(), { body: { sessionId: started.body.sessionId, taskId: started.body.taskId } });
      expect(outcome).toMatchObject({ type: 'task_completed' });
      const seen = proxy.targets.join('\n');
      expect(seen).toContain(type === 'http' ? `${fixtures()}/index.html` : fixtureHost());
      if (type === 'http') expect(seen).toContain(`${fixtures()}/about.html`);
      expect(proxy.refused).toBe(0);
      // the usage of a custom proxy has no proxy charge
      expect(outcome.usage.proxy_bytes).toBeUndefined();
      await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: started.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
      for (const name of ['sessions', 'tasks', 'events', 'users']) {
        const docs = await db.collection(name).find({}).toArray();
        expect({ name, leaked: JSON.stringify(docs).includes(password) }).toEqual({ name, leaked: false });
      }
    } finally {
      await proxy.close();
    }
  });

  it('a proxy that refuses the credentials, or is not there, fails the session start with PROXY_CONNECTION_FAILED', async () => {
    const proxy = await startHttpProxy('agent', 'right');
    try {
      const { apiKey: key } = await createUser({ sessionLimit: 1 });
      const wrong = await api(base(), 'POST', '/start/start-session', { key, body: { proxy: { source: 'custom', type: 'http', host: '127.0.0.1', port: String(proxy.port), username: 'agent', password: 'wrong' } } });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toMatchObject({ code: 'PROXY_CONNECTION_FAILED', details: { host: '127.0.0.1', port: proxy.port, reason: 'the proxy refused the credentials (HTTP 407)' } });
      const dead = allowedPort();
      const none = await runTask(base(), key, { proxy: { source: 'custom', type: 'socks', host: 'localhost', port: String(dead) }, task: { prompt: 'x' } });
      expect(none.body).toMatchObject({ success: false, code: 'PROXY_CONNECTION_FAILED', details: { host: 'localhost', port: dead, reason: 'connection refused' } });
      // the failed sessions gave their slot back: with a limit of one, a session still starts
      const ok = await api(base(), 'POST', '/start/start-session', { key, body: {} });
      expect(ok.status).toBe(200);
      await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: ok.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
    } finally {
      await proxy.close();
    }
  });
});

describe('managed proxies', () => {
  let svc: ServiceProcess;
  let upstream: Awaited<ReturnType<typeof startHttpProxy>>;
  beforeAll(async () => {
    upstream = await startHttpProxy('pool', 'pool-secret');
    svc = await startService({
      TEMPORAL_TASK_QUEUE: `managed-${Date.now()}`,
      MANAGED_PROXIES: JSON.stringify([{ country: 'DE', url: `http://pool:pool-secret@127.0.0.1:${upstream.port}` }]),
      PROXY_PRICE_PER_GB: '4',
      INLINE_WAIT_MS: '30000',
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await upstream?.close();
  });

  it('picks by country or at random, lists what exists otherwise, and charges the relayed bytes at 4 USD/GB', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const missing = await runTask(svc.baseUrl, key, { proxy: { source: 'Service', country: 'US' }, task: { prompt: 'x' } });
    expect(missing.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'proxy.country', value: 'US' }, message: 'No managed proxy in US; available countries: DE (or "random")' });

    for (const country of ['DE', 'random']) {
      const t = token(`managed-${country}`);
      await registerScript(model(), { match: t, steps: [{ tool: 'navigate', args: { url: `${fixtures()}/big.html` } }, { tool: 'done', args: { message: 'browsed' } }] });
      const before = upstream.targets.length;
      const outcome = await finished(svc.baseUrl, await runTask(svc.baseUrl, key, { proxy: { source: 'Service', country }, task: { prompt: `${t} go`, startingUrl: `${fixtures()}/index.html` } }));
      expect(outcome).toMatchObject({ type: 'task_completed' });
      expect(upstream.targets.slice(before).join('\n')).toContain(`${fixtures()}/big.html`);
      const u = outcome.usage;
      // index.html and big.html with their headers went through the relay
      expect(u.proxy_bytes).toBeGreaterThan(1500);
      expect(u.proxy_cost).toBeCloseTo((u.proxy_bytes * 4) / 1e9, 6);
      // cost = tokens at the scripted model's prices (1 and 2 USD per million) + proxy traffic
      expect(u.cost).toBeCloseTo((u.prompt_tokens * 1 + u.completion_tokens * 2) / 1e6 + u.proxy_cost, 6);
    }
  });

  it("the charge to the balance is the task's cost, proxy traffic included", async () => {
    const { userId, apiKey: key } = await createUser({ balance: 10 });
    const t = token('managed-charge');
    await registerScript(model(), { match: t, steps: [{ tool: 'navigate', args: { url: `${fixtures()}/big.html` } }, { tool: 'done', args: { message: 'browsed' } }] });
    const started = await runTask(svc.baseUrl, key, { proxy: { source: 'Service', country: 'de' }, task: { prompt: `${t} go`, startingUrl: `${fixtures()}/index.html` } });
    const outcome = await finished(svc.baseUrl, started);
    expect(outcome.usage.proxy_cost).toBeGreaterThan(0);
    // Charged step by step as the task ran; with its end, all of it.
    const user = await waitFor(async () => {
      const u = await db.collection<any>('users').findOne({ _id: userId as any });
      return u && u.chargedTasks?.includes(started.body.taskId) ? u : null;
    }, 20_000);
    expect(user.balance).toBeCloseTo(10 - outcome.usage.cost, 9);
  });

  it('charges the traffic as it flows: what a page sends after the last step, until the session ends, is charged too', async () => {
    const { userId, apiKey: key } = await createUser({ balance: 10 });
    const t = token('managed-flow');
    await registerScript(model(), { match: t, steps: [{ tool: 'navigate', args: { url: `${fixtures()}/chatty.html` } }, { tool: 'done', args: { message: 'browsed' } }] });
    // A session that stays after its task (start-session: not ended on completion).
    const started = await api(svc.baseUrl, 'POST', '/start/start-session', { key, body: { proxy: { source: 'Service', country: 'DE' }, task: { prompt: `${t} go`, startingUrl: `${fixtures()}/index.html` } } });
    expect(started.status).toBe(200);
    const outcome = await finished(svc.baseUrl, { body: { sessionId: started.body.sessionId, taskId: started.body.taskId } });
    expect(outcome).toMatchObject({ type: 'task_completed' });
    // The page goes on sending 50 KB five times a second while the session idles.
    await new Promise((r) => setTimeout(r, 4000));
    const term = await api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId: started.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
    expect(term.status).toBe(200);
    // About 1 MB after the last step: at 4 USD/GB about 0.004 USD, charged though no step reported it.
    const user = await waitFor(async () => {
      const u = await db.collection<any>('users').findOne({ _id: userId as any });
      return u && 10 - u.balance > outcome.usage.cost + 0.002 ? u : null;
    }, 20_000);
    console.log(`proxy traffic as it flows: task cost ${outcome.usage.cost} (proxy ${outcome.usage.proxy_cost}), charged ${10 - user.balance} by the session's end`);
    expect(user.spentToday.usd).toBeCloseTo(10 - user.balance, 9);
    expect(user.taskCharges ?? {}).toEqual({});
  });

  it("stops a step's proxy traffic where the task's maxCost would be passed: the page is refused, and the task ends TASK_BUDGET_EXCEEDED", async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const t = token('managed-cap');
    // chatty.html sends 50 KB five times a second: at 4 USD/GB about 0.001 USD a second.
    await registerScript(model(), { match: t, steps: [{ tool: 'navigate', args: { url: `${fixtures()}/chatty.html` } }, { tool: 'wait', args: { seconds: 10 } }, { tool: 'wait', args: { seconds: 10 } }, { tool: 'done', args: { message: 'browsed' } }] });
    // A model call costs about 0.0005 USD at the scripted model's prices: the second step is left about 0.0055 for its traffic.
    const maxCost = 0.006;
    const started = await runTask(svc.baseUrl, key, { proxy: { source: 'Service', country: 'DE' }, task: { prompt: `${t} go`, startingUrl: `${fixtures()}/index.html`, maxCost } });
    const outcome = await finished(svc.baseUrl, started);
    expect(outcome).toMatchObject({ status: 'failed', code: 'TASK_BUDGET_EXCEEDED', details: { budget: 'maxCost', limit: maxCost } });
    console.log(`in-step cut-off: maxCost ${maxCost}, proxy cost ${outcome.usage.proxy_cost}, task cost ${outcome.usage.cost}`);
    // Read every second, the traffic stopped about one second past what the step was left: the task passed maxCost by at
    // most that second and the step's own model call (unbounded, the 10 s wait alone carries 0.01 USD: about 0.011 in all).
    expect(outcome.usage.proxy_cost).toBeGreaterThan(0.003);
    expect(outcome.usage.cost).toBeLessThan(maxCost + 0.0025);
  });
});
