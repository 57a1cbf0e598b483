/**
 * The network guard, as a user with only an API key meets it: the agent's browser and the
 * service's deliveries reach only public addresses and what the operator allowlisted (the
 * test service allows just the fixture site and the reserved receiver ports). The Temporal
 * UI, Redis, cloud metadata, a local listener that is not allowlisted, every encoding of a
 * loopback address, and a redirect from an allowed page into the private network all stay
 * out of reach; nothing connects to the listener.
 */
import net from 'node:net';
import { MongoClient, type Db } from 'mongodb';
import { api, waitFor } from '../support/http';
import { recordedRequests, registerScript, type RecordedRequest } from '../support/scripted-model';
import { startReceiver } from '../support/webhook-receiver';
import { createUser } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

/** A local service that is NOT allowlisted: it counts every connection it gets. */
let listener: net.Server;
let lp: number;
let connections = 0;
let mongo: MongoClient;
let db: Db;

beforeAll(async () => {
  listener = net.createServer((socket) => {
    connections++;
    socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 28\r\n\r\n<h1>internal admin page</h1>');
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  lp = (listener.address() as net.AddressInfo).port;
  mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test');
  db = mongo.db();
});
afterAll(async () => {
  await new Promise<void>((r) => listener.close(() => r()));
  await mongo.close();
});

const runTask = (key: string, task: Record<string, unknown>) => api(base(), 'POST', '/start/run-task', { key, body: { task } });
const toolMessages = (requests: RecordedRequest[]): string[] => [...new Set(requests.flatMap((r) => (r.body.messages ?? []).filter((m: any) => m.role === 'tool').map((m: any) => String(m.content))))];
/** The tool results, one per call (across all requests: older turns are trimmed from later ones). */
const toolResults = (requests: RecordedRequest[]): string[] => {
  const byCall = new Map<string, string>();
  for (const r of requests) for (const m of r.body.messages ?? []) if (m.role === 'tool') byCall.set(m.tool_call_id, String(m.content));
  return [...byCall.values()];
};
const everything = (requests: RecordedRequest[]) => requests.map((r) => JSON.stringify(r.body.messages)).join('\n');

describe("the agent's browser", () => {
  it('cannot reach the Temporal UI, Redis, cloud metadata, a local listener in any encoding, or a private address behind a redirect', async () => {
    // Another user's live session: its id must never show up in what this user's agent sees.
    const victim = await createUser();
    const victimSession = await api(base(), 'POST', '/start/start-session', { key: victim.apiKey, body: {} });
    expect(victimSession.status).toBe(200);

    const uiPort = Number(process.env.INFRA_TEMPORAL_UI_PORT ?? 8244);
    const redisPort = Number(new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391').port);
    const blocked: [string, string][] = [
      [`http://127.0.0.1:${uiPort}/namespaces/browser-agent/workflows`, '127.0.0.1 is a private address (loopback)'],
      [`http://localhost:${uiPort}/namespaces/browser-agent/workflows`, 'localhost is a private address (loopback)'],
      [`http://127.0.0.1:${redisPort}/`, '127.0.0.1 is a private address (loopback)'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a private address (link-local)'],
      [`http://127.0.0.1:${lp}/admin`, '127.0.0.1 is a private address (loopback)'],
      [`https://127.0.0.1:${lp}/admin`, '127.0.0.1 is a private address (loopback)'],
      [`http://2130706433:${lp}/decimal`, '127.0.0.1 is a private address (loopback)'],
      [`http://0177.0.0.1:${lp}/octal`, '127.0.0.1 is a private address (loopback)'],
      [`http://0x7f.0.0.1:${lp}/hex`, '127.0.0.1 is a private address (loopback)'],
      [`http://127.1:${lp}/short`, '127.0.0.1 is a private address (loopback)'],
      [`http://[::ffff:127.0.0.1]:${lp}/mapped`, '::ffff:7f00:1 is a private address (loopback)'],
      [`http://[::1]:${lp}/v6`, '::1 is a private address (loopback)'],
      [`http://localhost:${lp}/name`, 'localhost is a private address (loopback)'],
      [`${fixtures()}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${lp}/after-redirect`)}`, '127.0.0.1 is a private address (loopback)'],
    ];
    const t = token('guard-nav');
    // Two blocked navigations, then an allowed one (three failed actions in a row would end the task).
    const allowed = { tool: 'navigate', args: { url: `${fixtures()}/about.html` } };
    const steps = blocked.flatMap(([url], i) => [{ tool: 'navigate', args: { url } }, ...(i % 2 === 1 ? [allowed] : [])]);
    await registerScript(model(), {
      match: t,
      steps: [
        ...steps,
        { tool: 'navigate', args: { url: `${fixtures()}/embed?target=${encodeURIComponent(`http://127.0.0.1:${lp}`)}` } },
        { tool: 'wait', args: { seconds: 1 } },
        { tool: 'navigate', args: { url: `${fixtures()}/webrtc.html` } },
        { tool: 'wait', args: { seconds: 2 } },
        { tool: 'done', args: { message: 'looked around' } },
      ],
    });
    const { apiKey: key } = await createUser();
    const res = await runTask(key, { prompt: `${t} look around`, startingUrl: `${fixtures()}/index.html` });
    const body = res.body.type === 'task_completed' ? res.body : await waitFor(async () => ((await api(base(), 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`)).body.status === 'task_completed' ? (await api(base(), 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`)).body : null), 180_000);
    expect(body).toMatchObject({ type: 'task_completed', data: { message: 'looked around' } });

    const requests = await recordedRequests(model(), t);
    // Every refusal says the same (the reason, kept in the operator's log, would map the deployment).
    const results = toolResults(requests);
    expect(results.filter((m) => m === 'Action failed: the address could not be reached or is not allowed')).toHaveLength(blocked.length);
    expect(toolMessages(requests).filter((m) => m.includes('could not be reached'))).toEqual(['Action failed: the address could not be reached or is not allowed']);
    const seen = everything(requests);
    expect(seen).not.toContain(victimSession.body.sessionId);
    expect(seen).not.toContain('internal admin page');
    // The embedding page itself loads, without any of its private sub-resources.
    expect(seen).toContain('Embedding page');
    expect(seen).toMatch(/sub-resources tried: fetch failed, websocket failed/);
    // WebRTC gathers no candidate that could reveal or reach a local address.
    expect(seen).toContain('ICE candidates gathered: 0');
    expect(connections).toBe(0);

    await api(base(), 'POST', '/start/send-message', { key: victim.apiKey, body: { sessionId: victimSession.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
  }, 240_000);

  it('a literal private address as startingUrl is a 400 at submission, in any encoding', async () => {
    const { apiKey: key } = await createUser();
    for (const url of [`http://127.0.0.1:${lp}/`, `http://2130706433:${lp}/`, 'http://169.254.169.254/latest/meta-data/', `http://[::ffff:127.0.0.1]:${lp}/`, 'http://10.0.0.8/', 'http://[fd00:ec2::254]/']) {
      const res = await runTask(key, { prompt: 'go', startingUrl: url });
      expect({ url, status: res.status, body: res.body }).toMatchObject({
        url,
        status: 400,
        body: { success: false, code: 'INVALID_PARAMETER', details: { parameter: 'task.startingUrl', value: url }, message: expect.stringContaining('must not point to a private address') },
      });
    }
    const session = await api(base(), 'POST', '/start/start-session', { key, body: { task: { prompt: 'go', startingUrl: `http://127.0.0.1:${lp}/` } } });
    expect(session.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.startingUrl' } });
    expect(connections).toBe(0);
  });

  it('a startingUrl whose name resolves to a private address fails the task with NAVIGATION_BLOCKED', async () => {
    const t = token('guard-start');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'should not get here' } }] });
    const { apiKey: key } = await createUser();
    const url = `http://localhost:${lp}/internal?token=abc`;
    const res = await runTask(key, { prompt: `${t} open it`, startingUrl: url });
    expect(res.body).toMatchObject({
      success: false,
      status: 'failed',
      code: 'NAVIGATION_BLOCKED',
      error: 'the address could not be reached or is not allowed',
      details: { url: `http://localhost:${lp}/internal`, reason: 'the address could not be reached or is not allowed' },
    });
    expect(await recordedRequests(model(), t)).toHaveLength(0);
    expect(connections).toBe(0);
    expect(res.body.details).not.toHaveProperty('refusedByGuard');
  });

  it('a public name that cannot be reached is said to be unreachable or not allowed, and not refused by the guard; an internal name says neither', async () => {
    const { apiKey: key } = await createUser();
    const t = token('unreach');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'should not get here' } }] });
    // A name under a public suffix that resolves nowhere (as every name does on a machine offline).
    const url = `https://unreachable-${Date.now()}.example.com/start`;
    const res = await runTask(key, { prompt: `${t} open it`, startingUrl: url });
    expect(res.body).toMatchObject({
      status: 'failed',
      code: 'NAVIGATION_BLOCKED',
      error: 'the address could not be reached or is not allowed',
      details: { url, reason: 'the address could not be reached or is not allowed', refusedByGuard: false },
    });
    expect(res.body.error).not.toMatch(/blocked by the network guard/);
    // An internal name (no public suffix) tells nothing of whether it exists.
    const u = token('internal');
    await registerScript(model(), { match: u, steps: [{ tool: 'done', args: { message: 'should not get here' } }] });
    const internal = `http://no-such-service-${Date.now()}/`;
    const hidden = await runTask(key, { prompt: `${u} open it`, startingUrl: internal });
    expect(hidden.body).toMatchObject({ status: 'failed', code: 'NAVIGATION_BLOCKED', error: 'the address could not be reached or is not allowed', details: { url: internal } });
    expect(hidden.body.details).not.toHaveProperty('refusedByGuard');
  });
});

describe('deliveries', () => {
  const deliveriesOf = async (taskId: string) => Object.values(((await db.collection<any>('tasks').findOne({ _id: taskId }))?.deliveries ?? {}) as Record<string, any>);

  it('a webhook to a literal private address is a 400 at submission', async () => {
    const { apiKey: key } = await createUser();
    const res = await runTask(key, { prompt: 'go', webhook: { name: 'h', url: `http://127.0.0.1:${lp}/hook`, submittedData: 'ai_response' } });
    expect(res.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.webhook.url' }, message: expect.stringContaining('private address') });
    const env = (await api(base(), 'POST', '/environments', { key, body: { name: 'guarded' } })).body.environment;
    const trigger = await api(base(), 'POST', '/cron-jobs', {
      key,
      body: { name: 'n', prompt: 'p', environmentId: env._id, scheduleType: 'every', scheduleInterval: '1d', webhook: { name: 'h', url: 'http://169.254.169.254/hook', submittedData: 'just_ping' } },
    });
    expect(trigger.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'webhook.url' } });
  });

  it('a webhook whose name resolves to a private address makes no connection and records why; an allowlisted port by name is delivered', async () => {
    const receiver = await startReceiver();
    try {
      const t = token('guard-hook');
      await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'done here' } }] });
      const { apiKey: key } = await createUser();
      const refused = await runTask(key, { prompt: `${t} a`, webhook: { name: 'internal', url: `http://localhost:${lp}/hook?secret=1`, submittedData: 'full_response' } });
      expect(refused.body).toMatchObject({ type: 'task_completed' });
      const [record] = await waitFor(async () => {
        const list = await deliveriesOf(refused.body.taskId);
        return list.length && list[0].status === 'failed' ? list : null;
      }, 30_000);
      expect(record).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: null, lastError: 'Not sent: the address could not be reached or is not allowed' });
      expect(connections).toBe(0);

      // The same name on a port the operator allowlisted is reached.
      const allowed = await runTask(key, { prompt: `${t} b`, webhook: { name: 'allowed', url: `http://localhost:${receiver.port}/by-name`, submittedData: 'just_ping' } });
      expect(allowed.body).toMatchObject({ type: 'task_completed' });
      await waitFor(async () => receiver.at('/by-name').length > 0, 30_000);
    } finally {
      await receiver.close();
    }
  });
});
