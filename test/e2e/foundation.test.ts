import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import Redis from 'ioredis';
import { MongoClient } from 'mongodb';
import { api, waitFor } from '../support/http';
import { admin, createUser, ROOT, serviceEnv, startService, type ServiceProcess, temporalClient } from '../support/service';

const base = () => process.env.TEST_API_URL!;

describe('accounts, auth and errors', () => {
  it('the admin CLI creates a user whose key works, and revoked keys and deactivated users are refused', async () => {
    const res = await admin(['users', 'create', '--email', `cli${Date.now()}@example.test`, '--balance', '5']);
    expect(res.code).toBe(0);
    expect(res.json).toEqual({ userId: expect.stringMatching(/^usr_/), apiKey: expect.stringMatching(/^bas_/) });
    const { userId, apiKey } = res.json;

    expect((await api(base(), 'GET', '/start/active-sockets-does-not-exist', { key: apiKey })).status).toBe(404);
    const second = await admin(['keys', 'create', '--user', userId]);
    expect(second.code).toBe(0);
    expect(second.json.apiKey).not.toBe(apiKey);

    // both keys authenticate (a 400 for the empty body means auth passed)
    for (const key of [apiKey, second.json.apiKey]) {
      const r = await api(base(), 'POST', '/start/send-message', { key, body: {} });
      expect(r.status).toBe(400);
    }
    expect((await admin(['keys', 'revoke', '--key', second.json.apiKey])).code).toBe(0);
    const revoked = await api(base(), 'POST', '/start/send-message', { key: second.json.apiKey, body: {} });
    expect(revoked.status).toBe(401);
    expect(revoked.body).toMatchObject({ success: false, message: 'Invalid or revoked API key', code: 'INVALID_API_KEY' });

    const topped = await admin(['users', 'topup', '--user', userId, '--amount', '2.5']);
    expect(topped.json.balance).toBeCloseTo(7.5);
    const listed = await admin(['users', 'list']);
    expect(listed.json.users.some((u: any) => u.userId === userId)).toBe(true);

    expect((await admin(['users', 'deactivate', '--user', userId])).code).toBe(0);
    const deactivated = await api(base(), 'POST', '/start/start-session', { key: apiKey, body: {} });
    expect(deactivated.status).toBe(403);
    expect(deactivated.body).toMatchObject({ success: false, message: 'Account is deactivated' });
  });

  it('answers missing and wrong keys with the exact messages', async () => {
    const missing = await api(base(), 'POST', '/start/start-session', { body: {} });
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ success: false, message: 'API key required', error: 'API key required' });
    const wrong = await api(base(), 'POST', '/start/start-session', { key: 'bas_nope', body: {} });
    expect(wrong.status).toBe(401);
    expect(wrong.body.message).toBe('Invalid or revoked API key');
    // routes that need no key
    expect((await api(base(), 'GET', '/start/health')).status).toBe(200);
    expect((await api(base(), 'GET', '/task/nope/nope')).status).toBe(404);
  });

  it('reports bad input in the documented format', async () => {
    const { apiKey: key } = await createUser();
    const malformed = await api(base(), 'POST', '/start/send-message', { key, rawBody: '{"sessionId": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ success: false, code: 'INVALID_PARAMS' });

    const noSession = await api(base(), 'POST', '/start/send-message', { key, body: { message: { actionType: 'state', newState: 'stop' } } });
    expect(noSession.status).toBe(400);
    expect(noSession.body).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'sessionId' } });

    const noMessage = await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: 'x' } });
    expect(noMessage.body).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'message' } });

    const range = await api(base(), 'POST', '/start/start-session', { key, body: { task: { prompt: 'x', maxDuration: 500 } } });
    expect(range.status).toBe(400);
    expect(range.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.maxDuration', value: 500, min: 1000, max: 300000 } });

    const reach = await api(base(), 'POST', '/start/start-session', { key, body: { reachOutMode: 'sometimes' } });
    expect(reach.status).toBe(400);
    expect(reach.body.message).toBe('reachOutMode must be one of: off, guardrail_only, full');

    const emptyPrompt = await api(base(), 'POST', '/start/run-task', { key, body: { task: { prompt: '' } } });
    expect(emptyPrompt.body).toMatchObject({ code: 'INVALID_TASK_DETAILS' });
    const noTask = await api(base(), 'POST', '/start/run-task', { key, body: {} });
    expect(noTask.body).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'task.prompt' } });

    const unknown = await api(base(), 'GET', '/no/such/route');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
    const method = await api(base(), 'DELETE', '/start/start-session', { key });
    expect(method.status).toBe(405);
    expect(method.body).toMatchObject({ success: false, code: 'METHOD_NOT_ALLOWED' });

    const big = await api(base(), 'POST', '/start/start-session', { key, rawBody: JSON.stringify({ pad: 'x'.repeat(2_000_000) }) });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('refuses to boot on a bad configuration value and names the variable', () => {
    const run = spawnSync(process.execPath, [path.join(ROOT, 'dist/main.js')], { env: serviceEnv({ PORT: 'eighty' }), encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('PORT');
    const run2 = spawnSync(process.execPath, [path.join(ROOT, 'dist/main.js')], { env: serviceEnv({ MONGODB_URL: 'http://nope' }), encoding: 'utf8', timeout: 60_000 });
    expect(run2.status).toBe(2);
    expect(run2.stderr).toContain('MONGODB_URL');
  });
});

describe('sessions on the real stack', () => {
  let temporal: Client;
  let closeTemporal: () => Promise<void>;
  beforeAll(async () => {
    ({ client: temporal, close: closeTemporal } = await temporalClient());
  });
  afterAll(async () => {
    await closeTemporal();
  });

  it('starts a session on a browser worker and terminates it, closing the context', async () => {
    const { userId, apiKey: key } = await createUser({ balance: 3 });
    const health = await api(base(), 'GET', '/start/health');
    expect(health.body).toMatchObject({ success: true, status: 'healthy', instancesAvailable: true });
    expect(health.body.instanceCount).toBeGreaterThanOrEqual(1);
    expect(new Date(health.body.timestamp).getTime()).toBeGreaterThan(Date.now() - 60_000);

    const res = await api(base(), 'POST', '/start/start-session', { key, body: {} });
    expect(res.status).toBe(200);
    const s = res.body;
    expect(s).toMatchObject({
      success: true,
      sessionId: expect.stringMatching(/^[0-9a-f]{32}$/),
      socketURL: base(),
      streaming: { dimensions: { width: 1024, height: 600 } },
      initialPrompt: '',
      expiresIn: 300000,
      balance: 3,
      message: expect.any(String),
    });
    expect(s.streaming.webViewURL).toMatch(new RegExp(`^${base()}/view/${s.sessionId}\\?token=`));
    expect(s.streaming.webRTCURL).toMatch(new RegExp(`^${base()}/whep/${s.sessionId}\\?token=`));

    // visible in Temporal with its owner and status
    const found = await waitFor(async () => {
      const list = [];
      for await (const wf of temporal.workflow.list({ query: `OwnerUserId = "${userId}" AND SessionStatus = "active"` })) list.push(wf);
      return list.length === 1 ? list : null;
    }, 15_000);
    expect(found[0].workflowId).toBe(`session-${s.sessionId}`);
    await waitFor(async () => (await api(base(), 'GET', '/start/health')).body.sessionsOpen >= 1, 10_000);

    const term = await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: s.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
    expect(term.status).toBe(200);
    expect(term.body).toEqual({ success: true, message: 'Session terminated' });

    const desc = await waitFor(async () => {
      const d = await temporal.workflow.getHandle(`session-${s.sessionId}`).describe();
      return d.status.name === 'COMPLETED' ? d : null;
    }, 15_000);
    expect(desc.searchAttributes.SessionStatus).toEqual(['terminated']);
    const result = await temporal.workflow.getHandle(`session-${s.sessionId}`).result();
    expect(result).toMatchObject({ status: 'terminated', endReason: 'terminated' });

    const again = await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: s.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('SESSION_NOT_FOUND');
  });

  it('answers start-session before the browser is handed over; an interaction sent at once waits for it and is performed', async () => {
    const { apiKey: key } = await createUser();
    const send = (sessionId: string, message: Record<string, unknown>) => api(base(), 'POST', '/start/send-message', { key, body: { sessionId, message } });
    // twice (4 rated requests each, within the 10 a minute)
    for (let i = 0; i < 2; i++) {
      const { sessionId } = (await api(base(), 'POST', '/start/start-session', { key, body: {} })).body;
      const [takeOver, click] = await Promise.all([
        send(sessionId, { actionType: 'interaction', action: { type: 'takeOverControl' } }),
        // sent with the takeover: the two run in the order the session took them, each once the
        // browser is there (a click taken first takes control itself, and the takeover then finds it taken)
        new Promise((r) => setTimeout(r, 5)).then(() => send(sessionId, { actionType: 'interaction', action: { type: 'CLICK', x: 10, y: 200 } })),
      ]);
      expect(takeOver.status).toBe(200);
      expect(takeOver.body).toEqual({ success: true, message: expect.stringMatching(/^Manual control (is already )?taken$/) });
      expect([click.status, click.body]).toEqual([200, { success: true, message: 'CLICK performed' }]);
      // the session went through pending to active with its browser on a worker
      const view = await temporal.workflow.getHandle(`session-${sessionId}`).query('session');
      expect(view).toMatchObject({ status: 'active', workerId: expect.any(String) });
      expect((await send(sessionId, { actionType: 'state', newState: 'terminate' })).status).toBe(200);
    }
  });

  it("treats another user's session as not found", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const s = (await api(base(), 'POST', '/start/start-session', { key: alice.apiKey, body: {} })).body;
    const probe = await api(base(), 'POST', '/start/send-message', { key: bob.apiKey, body: { sessionId: s.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
    expect(probe.status).toBe(404);
    expect(probe.body).toMatchObject({ success: false, code: 'SESSION_NOT_FOUND' });
    const own = await api(base(), 'POST', '/start/send-message', { key: alice.apiKey, body: { sessionId: s.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
    expect(own.status).toBe(200);
  });

  it('enforces the concurrent-session limit and frees the slot when a session ends', async () => {
    const { apiKey: key } = await createUser({ sessionLimit: 1 });
    const first = await api(base(), 'POST', '/start/start-session', { key, body: {} });
    expect(first.status).toBe(200);
    const second = await api(base(), 'POST', '/start/start-session', { key, body: {} });
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ success: false, code: 'SESSION_LIMIT_REACHED', details: { current: 1, limit: 1 } });
    await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: first.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
    const third = await waitFor(async () => {
      const r = await api(base(), 'POST', '/start/start-session', { key, body: {} });
      return r.status === 200 ? r : null;
    }, 15_000, 500);
    await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: third.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
  });

  it('refuses a session with an empty balance', async () => {
    const { apiKey: key } = await createUser({ balance: 0 });
    const res = await api(base(), 'POST', '/start/start-session', { key, body: {} });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ success: false, code: 'INSUFFICIENT_BALANCE', details: { balance: 0, required: expect.any(Number) } });
  });

  it('expires an idle session after the inactivity timeout', async () => {
    const shortApi = await startService({ ROLE: 'api', SESSION_IDLE_TIMEOUT_MS: '2500' });
    try {
      const { apiKey: key } = await createUser();
      const s = (await api(shortApi.baseUrl, 'POST', '/start/start-session', { key, body: {} })).body;
      expect(s.expiresIn).toBe(2500);
      const handle = temporal.workflow.getHandle(`session-${s.sessionId}`);
      const result = await handle.result();
      expect(result).toMatchObject({ status: 'expired', endReason: 'expired' });
      const after = await api(shortApi.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId: s.sessionId, message: { actionType: 'state', newState: 'pause' } } });
      expect(after.status).toBe(404);
      // The owner learns it expired; anyone else learns nothing about it.
      expect(after.body).toMatchObject({ success: false, code: 'SESSION_EXPIRED', error: 'Session expired' });
      const stranger = await createUser();
      const other = await api(shortApi.baseUrl, 'POST', '/start/send-message', { key: stranger.apiKey, body: { sessionId: s.sessionId, message: { actionType: 'state', newState: 'pause' } } });
      expect([other.status, other.body.code]).toEqual([404, 'SESSION_NOT_FOUND']);
      // The MCP tools say the same.
      const mcp = async (apiKey: string) => {
        const client = new McpClient({ name: 'e2e', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${shortApi.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
        try {
          return (await client.callTool({ name: 'control_session', arguments: { sessionId: s.sessionId, action: 'pause' } })) as { isError?: boolean; structuredContent?: any };
        } finally {
          await client.close();
        }
      };
      expect((await mcp(key)).structuredContent).toMatchObject({ success: false, code: 'SESSION_EXPIRED' });
      // Anyone else gets the contract's JSON-RPC error for a session not found.
      await expect(mcp(stranger.apiKey)).rejects.toMatchObject({ code: -32603, message: expect.stringMatching(/Session not found$/) });
    } finally {
      await shortApi.stop();
    }
  });
});

describe('browser workers come and go', () => {
  // Its own registry (Redis database) and workflow queue: these workers are counted and killed alone.
  const redisDb = `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/7`;
  const isolated = { REDIS_URL: redisDb, TEMPORAL_TASK_QUEUE: `isolated-${Date.now()}` };
  let apiOnly: ServiceProcess;
  beforeAll(async () => {
    apiOnly = await startService({ ROLE: 'api', ...isolated });
  });
  afterAll(async () => {
    await apiOnly.stop();
  });

  it('answers 503 without workers, counts a worker that heartbeats, and drops a killed one within 30 s', async () => {
    const { apiKey: key } = await createUser();
    const none = await api(apiOnly.baseUrl, 'GET', '/start/health');
    expect(none.body).toMatchObject({ instanceCount: 0, instancesAvailable: false });
    const refused = await api(apiOnly.baseUrl, 'POST', '/start/start-session', { key, body: {} });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ success: false, code: 'NO_INSTANCES_AVAILABLE' });

    const worker = await startService({ ROLE: 'worker', ...isolated, WORKER_TTL_MS: '15000' });
    try {
      const up = await waitFor(async () => {
        const h = await api(apiOnly.baseUrl, 'GET', '/start/health');
        return h.body.instanceCount === 1 ? h : null;
      }, 15_000);
      expect(up.body.instancesAvailable).toBe(true);
      const killedAt = Date.now();
      worker.child.kill('SIGKILL');
      await waitFor(async () => (await api(apiOnly.baseUrl, 'GET', '/start/health')).body.instanceCount === 0, 30_000, 500);
      expect(Date.now() - killedAt).toBeLessThan(30_000);
    } finally {
      await worker.stop('SIGKILL');
    }
  });

  it('answers 503 when every worker is full, before a session is admitted', async () => {
    const { userId, apiKey: key } = await createUser();
    const redis = new Redis(redisDb);
    const mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL!);
    try {
      await redis.hset('bas:workers', 'full', JSON.stringify({ workerId: 'full', taskQueue: 'browser-full', sessions: 2, capacity: 2, heartbeatAt: Date.now() }));
      const refused = await api(apiOnly.baseUrl, 'POST', '/start/start-session', { key, body: {} });
      expect([refused.status, refused.body.code]).toEqual([503, 'NO_INSTANCES_AVAILABLE']);
      // nothing was admitted: no slot held, no session record
      expect((await mongo.db().collection<any>('users').findOne({ _id: userId }))?.activeSessions ?? 0).toBe(0);
      expect(await mongo.db().collection('sessions').countDocuments({ userId })).toBe(0);
    } finally {
      await redis.hdel('bas:workers', 'full');
      redis.disconnect();
      await mongo.close();
    }
  });

  it('a worker stopped the moment it says ready still drains and exits cleanly', async () => {
    // A supervisor may stop a process as soon as it reads "ready": SIGTERM must drain then, not kill it mid-start.
    for (let i = 0; i < 3; i++) {
      const worker = await startService({ ROLE: 'worker', ...isolated });
      expect(await worker.stop('SIGTERM')).toBe(0);
    }
  });

  it('a worker stopped with SIGTERM drains, leaves health at once and exits cleanly', async () => {
    // Its log at info says how long each phase of the drain took, shown if it does not exit cleanly.
    const worker = await startService({ ROLE: 'worker', LOG_LEVEL: 'info', ...isolated });
    await waitFor(async () => (await api(apiOnly.baseUrl, 'GET', '/start/health')).body.instanceCount === 1, 15_000);
    const code = await worker.stop('SIGTERM');
    expect({ code, log: code === 0 ? '' : worker.output().slice(-3000) }).toEqual({ code: 0, log: '' });
    expect((await api(apiOnly.baseUrl, 'GET', '/start/health')).body.instanceCount).toBe(0);
  });
});
