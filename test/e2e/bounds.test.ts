/**
 * Limits that keep one user from stalling or outliving the others, end to end:
 * outputSchema size and patterns (RE2), human-like typing, WHEP viewers and Socket.IO
 * connections counted across two API instances, event replays, replaced webhook secrets,
 * and failure messages that never reach Temporal's history in clear.
 */
import wrtc from '@roamhq/wrtc';
import { io, type Socket } from 'socket.io-client';
import { api, waitFor } from '../support/http';
import { registerScript } from '../support/scripted-model';
import { createUser, startService, type ServiceProcess } from '../support/service';
import { verifiesWith } from '../support/standard-webhooks';
import { startReceiver } from '../support/webhook-receiver';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
const runTask = (key: string, task: Record<string, unknown>) => api(base(), 'POST', '/start/run-task', { key, body: { task } });
const startSession = async (key: string) => {
  const res = await api(base(), 'POST', '/start/start-session', { key, body: {} });
  expect(res.status).toBe(200);
  return res.body as { sessionId: string; streaming: { webRTCURL: string } };
};
/**
 * A client address of its own per call (the API trusts X-Forwarded-For from loopback): a new
 * documentation address each time (two ranges, 508 of them), so two clients never share one.
 */
let addresses = 0;
const address = () => {
  const n = addresses++;
  return `${n < 254 ? '198.51.100' : '203.0.113'}.${1 + (n % 254)}`;
};

describe('outputSchema bounds', () => {
  const big = { type: 'object', description: 'x'.repeat(65 * 1024), properties: { a: { type: 'string' } } };

  it('refuses a schema over 64 KB with 400 INVALID_PARAMETER naming where it was, on every way in', async () => {
    const { apiKey: key } = await createUser();
    const tooBig = { code: 'INVALID_PARAMETER', message: expect.stringMatching(/outputSchema is larger than 64 KB \(\d+ bytes serialized\)/) };
    const run = await runTask(key, { prompt: 'x', outputType: 'structured_json', outputSchema: big });
    expect(run.status).toBe(400);
    expect(run.body).toMatchObject({ ...tooBig, details: { parameter: 'task.outputSchema', value: null } });
    const start = await api(base(), 'POST', '/start/start-session', { key, body: { task: { prompt: 'x', outputType: 'structured_json', outputSchema: big } } });
    expect(start.status).toBe(400);
    expect(start.body).toMatchObject({ ...tooBig, details: { parameter: 'task.outputSchema' } });
    const s = await startSession(key);
    const newTask = await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: s.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: 'x', outputType: 'structured_json', outputSchema: big } } });
    expect(newTask.status).toBe(400);
    expect(newTask.body).toMatchObject({ ...tooBig, details: { parameter: 'message.outputSchema' } });
    // triggers: the schema is checked before the environment is looked up
    const cron = await api(base(), 'POST', '/cron-jobs', {
      key,
      body: { name: 'big', prompt: 'x', environmentId: 'env_000000000000000000000000', scheduleType: 'every', scheduleInterval: '1d', outputType: 'structured', outputSchema: big, deliveryMode: 'bot' },
    });
    expect(cron.status).toBe(400);
    expect(cron.body).toMatchObject({ ...tooBig, details: { parameter: 'outputSchema' } });
    // a pattern RE2 cannot run (back-reference) is refused at submission too
    const backref = await runTask(key, { prompt: 'x', outputType: 'structured_json', outputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '(a)\\1' } } } });
    expect(backref.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.outputSchema' }, message: expect.stringContaining('patterns use RE2 syntax') });
  });

  it('answers a catastrophic pattern against a long value at once, and the worker stays healthy', async () => {
    const { apiKey: key } = await createUser();
    const t = token('evil-re');
    const evil = `${'a'.repeat(50_000)}b`;
    await registerScript(model(), {
      match: t,
      steps: [{ tool: 'done', args: { result: { code: evil } } }, { tool: 'done', args: { result: { code: 'aaaa' } } }],
    });
    const outputSchema = { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+$' } }, required: ['code'] };
    const started = Date.now();
    const res = await runTask(key, { prompt: `${t} code`, outputType: 'structured_json', outputSchema });
    const elapsedMs = Date.now() - started;
    expect(res.body).toMatchObject({ type: 'task_completed', data: { message: '{"code":"aaaa"}' } });
    // the model was told why the first answer was refused
    const requests = (await (await fetch(`${model().replace(/\/v1$/, '')}/__requests?match=${encodeURIComponent(t)}`)).json()) as any[];
    expect(JSON.stringify(requests[1].body.messages)).toContain('must match pattern');
    const health = await api(base(), 'GET', '/start/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'healthy' });
    process.stdout.write(`evil pattern task answered in ${elapsedMs} ms\n`);
  });

  it('keeps failure messages out of Temporal history in clear (encoded and encrypted)', async () => {
    const { apiKey: key } = await createUser();
    const t = token('enc-fail');
    const marker = `marker${Date.now()}`;
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { result: { code: 'nope' } } }] });
    const res = await runTask(key, { prompt: `${t} code`, outputType: 'structured_json', outputSchema: { type: 'object', properties: { code: { type: 'string', pattern: `^${marker}$` } } } });
    expect(res.body).toMatchObject({ status: 'failed', code: 'INVALID_STRUCTURED_OUTPUT', error: expect.stringContaining(marker) });
    // the session workflow's history, read raw: no codec, no failure converter
    const { Client, Connection } = await import('@temporalio/client');
    const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS ?? '127.0.0.1:7244' });
    try {
      const raw = new Client({ connection, namespace: 'browser-agent' });
      const history = await raw.workflow.getHandle(`session-${res.body.sessionId}`).fetchHistory();
      const failed = history.events!.filter((e) => e.activityTaskFailedEventAttributes);
      expect(failed.length).toBeGreaterThan(0);
      for (const e of failed) {
        const failure = e.activityTaskFailedEventAttributes!.failure!;
        expect(failure.message).toBe('Encoded failure');
        expect(failure.encodedAttributes?.metadata?.encoding && Buffer.from(failure.encodedAttributes.metadata.encoding).toString()).toBe('binary/encrypted');
      }
      const text = JSON.stringify(history, (_k, v) => (v instanceof Uint8Array || (v && v.type === 'Buffer') ? Buffer.from(v.data ?? v).toString('latin1') : v));
      expect(text).not.toContain(marker);
      expect(text).not.toContain('must match pattern');
    } finally {
      await connection.close();
    }
  });
});

describe('human-like typing', () => {
  it('refuses more than 2,000 characters with 400 INVALID_PARAMETER, without echoing them', async () => {
    const { apiKey: key } = await createUser();
    const s = await startSession(key);
    const text = 'hunter2-'.repeat(300);
    const res = await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: s.sessionId, message: { actionType: 'interaction', action: { type: 'TYPE', text, humanLike: true } } } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 'INVALID_PARAMETER', details: { parameter: 'message.action.text', value: null }, message: expect.stringContaining('at most 2000 characters (got 2400)') });
    expect(res.text).not.toContain('hunter2');
  });
});

describe('webhook secrets', () => {
  it('keep at most three replaced secrets signing', async () => {
    const receiver = await startReceiver();
    try {
      const { apiKey: key } = await createUser();
      const secrets = [(await api(base(), 'GET', '/webhooks/secret', { key })).body.secret as string];
      for (let i = 0; i < 5; i++) secrets.push((await api(base(), 'POST', '/webhooks/secret/rotate', { key })).body.secret);
      const t = token('5-rotated');
      await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'signed' } }] });
      expect((await runTask(key, { prompt: `${t} go`, webhook: { name: 'r', url: receiver.url('/rotated'), submittedData: 'ai_response' } })).body).toMatchObject({ type: 'task_completed' });
      const [got] = await waitFor(async () => (receiver.at('/rotated').length ? receiver.at('/rotated') : null), 30_000);
      expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(4);
      expect(secrets.map((s) => verifiesWith(s, got.body, got.headers))).toEqual([false, false, true, true, true, true]);
    } finally {
      await receiver.close();
    }
  });
});

describe('live channel bounds, across two API instances', () => {
  let a: ServiceProcess;
  let b: ServiceProcess;
  const limits = { SOCKET_MAX_PER_SESSION: '3', SOCKET_MAX_PER_ADDRESS: '4', SOCKET_REPLAY_MAX_EVENTS: '3', SOCKET_REPLAYS_PER_MINUTE: '3', WHEP_MAX_PEERS_PER_SESSION: '2' };
  const sockets: Socket[] = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([startService({ ROLE: 'api', ...limits }), startService({ ROLE: 'api', ...limits })]);
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) s.close();
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  /** Connects; answers the socket, or the connect_error's message and data. */
  const connect = (url: string, auth: Record<string, unknown>, from: string) =>
    new Promise<{ socket?: Socket; error?: { message: string; data?: any }; received: { event: string; payload: any }[] }>((resolve) => {
      const socket = io(url, { auth, transports: ['websocket'], reconnection: false, forceNew: true, extraHeaders: { 'x-forwarded-for': from } });
      const received: { event: string; payload: any }[] = [];
      socket.onAny((event, payload) => received.push({ event, payload }));
      sockets.push(socket);
      socket.once('connect', () => resolve({ socket, received }));
      socket.once('connect_error', (err: Error & { data?: any }) => resolve({ error: { message: err.message, data: err.data }, received }));
    });

  it('refuses a session more than its connections, counted on every instance, and frees a slot on disconnect', async () => {
    const { apiKey: key } = await createUser();
    const s = await startSession(key);
    const [x, y, z] = [address(), address(), address()];
    const first = await connect(a.baseUrl, { sessionId: s.sessionId }, x);
    const second = await connect(b.baseUrl, { sessionId: s.sessionId }, y);
    const third = await connect(a.baseUrl, { sessionId: s.sessionId }, z);
    expect([first.error, second.error, third.error]).toEqual([undefined, undefined, undefined]);
    const fourth = await connect(b.baseUrl, { sessionId: s.sessionId }, z);
    expect(fourth.error).toEqual({ message: 'Too many connections to this session: at most 3 at once', data: { code: 'TOO_MANY_CONNECTIONS', scope: 'session', limit: 3 } });
    first.socket!.close();
    const again = await waitFor(async () => {
      const r = await connect(b.baseUrl, { sessionId: s.sessionId }, z);
      return r.socket ? r : null;
    }, 10_000);
    expect(again.socket!.connected).toBe(true);
  });

  it('refuses one address more than its connections, over every session and instance', async () => {
    const { apiKey: key } = await createUser();
    const [s1, s2] = [await startSession(key), await startSession(key)];
    const from = address();
    const results = [];
    for (const [url, s] of [[a.baseUrl, s1], [b.baseUrl, s1], [a.baseUrl, s2], [b.baseUrl, s2]] as const) results.push(await connect(url, { sessionId: s.sessionId }, from));
    expect(results.map((r) => r.error)).toEqual([undefined, undefined, undefined, undefined]);
    const refused = await connect(a.baseUrl, { sessionId: s2.sessionId }, from);
    expect(refused.error).toEqual({ message: 'Too many connections from this address: at most 4 at once', data: { code: 'TOO_MANY_CONNECTIONS', scope: 'address', limit: 4 } });
    // another address is not affected
    expect((await connect(a.baseUrl, { sessionId: s2.sessionId }, address())).error).toBeUndefined();
  });

  it('replays at most 3 missed events per connection and at most 3 replays a minute', async () => {
    const { apiKey: key } = await createUser();
    const t = token('replay');
    await registerScript(model(), {
      match: t,
      steps: [
        ...Array.from({ length: 6 }, () => ({ tool: 'wait', args: { seconds: 0.1 } })),
        { tool: 'done', args: { message: 'replayed' } },
      ],
    });
    const res = await api(base(), 'POST', '/start/start-session', { key, body: { task: { prompt: `${t} wait`, startingUrl: `${fixtures()}/index.html` } } });
    const { sessionId } = res.body;
    await waitFor(async () => (await api(base(), 'GET', `/task/${sessionId}/${res.body.taskId}`)).body.status === 'task_completed', 30_000);
    const from = address();

    const first = await connect(a.baseUrl, { sessionId, lastSeq: 0 }, from);
    const notice = await waitFor(async () => first.received.find((r) => r.payload?.code === 'REPLAY_TRUNCATED'), 10_000);
    // What came before the notice is the replay; a live event of the session may follow it.
    const replayed = first.received.slice(0, first.received.indexOf(notice)).filter((r) => typeof r.payload?.seq === 'number').map((r) => r.payload.seq);
    expect(replayed).toEqual([1, 2, 3]);
    expect(notice.event).toBe('error');
    expect(notice.payload).toMatchObject({ success: false, details: { lastSeq: 3, limit: 3 }, error: 'Only 3 missed events are replayed to one connection; connect again with auth.lastSeq 3 for the next ones' });

    const second = await connect(b.baseUrl, { sessionId, lastSeq: 3 }, from);
    await waitFor(async () => second.received.some((r) => r.payload?.seq === 4), 10_000);
    expect(second.received.filter((r) => typeof r.payload?.seq === 'number').map((r) => r.payload.seq).slice(0, 3)).toEqual([4, 5, 6]);

    expect((await connect(a.baseUrl, { sessionId, lastSeq: 100 }, from)).error).toBeUndefined();
    const fourth = await connect(b.baseUrl, { sessionId, lastSeq: 0 }, from);
    expect(fourth.error).toMatchObject({ message: expect.stringMatching(/^Too many event replays: at most 3 connections with auth.lastSeq per minute; try again in \d+ s$/), data: { code: 'TOO_MANY_REPLAYS', limit: 3 } });
    // without a replay the session still opens from that address (once a connection of the three is gone)
    first.socket!.close();
    const plain = await waitFor(async () => {
      const r = await connect(b.baseUrl, { sessionId }, from);
      return r.socket ? r : null;
    }, 10_000);
    expect(plain.socket!.connected).toBe(true);
  });

  it('caps WHEP viewers per session across instances: 429 past the cap, a slot back after DELETE', async () => {
    const { apiKey: key } = await createUser();
    const s = await startSession(key);
    const whep = new URL(s.streaming.webRTCURL);
    const peers: RTCPeerConnection[] = [];
    const offer = async (baseUrl: string) => {
      const pc = new wrtc.RTCPeerConnection({ iceServers: [] });
      peers.push(pc);
      pc.addTransceiver('video', { direction: 'recvonly' });
      await pc.setLocalDescription(await pc.createOffer());
      return api(baseUrl, 'POST', `${whep.pathname}${whep.search}`, { rawBody: pc.localDescription!.sdp, headers: { 'content-type': 'application/sdp' } });
    };
    try {
      const one = await offer(a.baseUrl);
      const two = await offer(b.baseUrl);
      expect([one.status, two.status]).toEqual([201, 201]);
      const three = await offer(a.baseUrl);
      expect(three.status).toBe(429);
      expect(three.body).toMatchObject({ success: false, code: 'TOO_MANY_VIEWERS', details: { limit: 2 } });
      expect((await offer(b.baseUrl)).status).toBe(429);
      expect((await api(a.baseUrl, 'DELETE', String(one.headers.get('location')))).status).toBe(204);
      expect((await offer(b.baseUrl)).status).toBe(201);
    } finally {
      for (const pc of peers) pc.close();
    }
  });
});
