/**
 * The MCP endpoint in process: the router on an Express app on a loopback port, with fake
 * store and sessions service (no database, no Temporal, no browser). Covers the contract's
 * JSON-RPC codes (-32603 session not found, -32600 invalid request), the per-user cap on
 * open MCP sessions and their idle expiry.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { loadConfig, type Config } from '../../config';
import { ServiceError } from '../../contracts/errors';
import { createLogger } from '../../logger';
import type { SessionsService } from '../../sessions/sessions.service';
import type { Store } from '../../store/store';
import { mcpRoutes, type McpRouter } from './mcp.routes';

const USERS: Record<string, { _id: string; status: 'active' }> = {
  key_a: { _id: 'usr_a', status: 'active' },
  key_b: { _id: 'usr_b', status: 'active' },
};
/** Browser sessions in the fake store: one of usr_b's. */
const BROWSER_SESSIONS: Record<string, { userId: string; status: string }> = { ses_of_b: { userId: 'usr_b', status: 'active' } };

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'unit', version: '1' } } };
const ACCEPT = 'application/json, text/event-stream';

interface Api {
  base: string;
  router: McpRouter;
  server: http.Server;
}

async function startApi(over: Partial<Config> = {}): Promise<Api> {
  const config = { ...loadConfig({}), MCP_MAX_SESSIONS_PER_USER: 2, MCP_SESSION_IDLE_MS: 60_000, ...over } as Config;
  // The real middleware answers 401 without a key; here the key names the user.
  const auth: RequestHandler = (req, res, next) => {
    const user = USERS[(req.get('authorization') ?? '').replace(/^Bearer /, '')];
    if (!user) return void res.status(401).json({ success: false, message: 'API key required' });
    req.user = user as never;
    next();
  };
  const store = {
    users: { get: async (id: string) => Object.values(USERS).find((u) => u._id === id) ?? null },
    sessions: { get: async (id: string) => BROWSER_SESSIONS[id] ?? null, liveIds: async () => [] },
    tasks: { idsOfSession: async () => [] },
    events: { after: async () => [] },
  } as unknown as Store;
  const sessions = {
    task: async () => null,
    // The session ended between the ownership check and the call.
    changeState: async () => {
      throw new ServiceError('SESSION_NOT_FOUND', 'Session not found');
    },
  } as unknown as SessionsService;
  const router = mcpRoutes({ config, store, sessions, logger: createLogger('silent'), auth, limit: { redis: {} as never, limit: 10, windowMs: 60_000 } });
  const app = express();
  app.use(express.json());
  app.use(router);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, router, server };
}

async function stopApi(api: Api): Promise<void> {
  await api.router.close();
  api.server.closeAllConnections();
  await new Promise((r) => api.server.close(r));
}

/** The JSON-RPC message of an answer, whether plain JSON or one SSE event. */
async function rpcBody(res: Response): Promise<any> {
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text);
  const data = text.split('\n').find((l) => l.startsWith('data: '));
  return data ? JSON.parse(data.slice(6)) : undefined;
}

const call = (api: Api, method: string, path: string, key: string, opts: { body?: unknown; session?: string } = {}) =>
  fetch(`${api.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      accept: ACCEPT,
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(opts.session ? { 'mcp-session-id': opts.session } : {}),
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });

/** A new MCP session over streamable HTTP; its id, or the refusal. */
async function initialize(api: Api, key: string): Promise<{ status: number; session: string | null; body: any }> {
  const res = await call(api, 'POST', '/mcp', key, { body: INIT });
  return { status: res.status, session: res.headers.get('mcp-session-id'), body: await rpcBody(res) };
}

const toolsList = (api: Api, key: string, session: string) => call(api, 'POST', '/mcp', key, { session, body: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} } });

async function connectClient(api: Api, key: string): Promise<Client> {
  const client = new Client({ name: 'unit', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('MCP endpoint: JSON-RPC error codes of the contract', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi({ MCP_MAX_SESSIONS_PER_USER: 5 });
  });
  afterAll(() => stopApi(api));

  it('an unknown MCP session is 404 with -32603 on POST, GET and DELETE /mcp and on POST /mcp/messages', async () => {
    const post = await call(api, 'POST', '/mcp', 'key_a', { session: 'no-such-session', body: { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} } });
    expect(post.status).toBe(404);
    expect(await post.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'MCP session not found' } });
    for (const method of ['GET', 'DELETE']) {
      const res = await call(api, method, '/mcp', 'key_a', { session: 'no-such-session' });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'MCP session not found' } });
    }
    const messages = await call(api, 'POST', '/mcp/messages?sessionId=no-such-session', 'key_a', { body: { jsonrpc: '2.0', id: 3, method: 'tools/list' } });
    expect(messages.status).toBe(404);
    expect(await messages.json()).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'MCP session not found' } });
  });

  it('no session id is 400 with -32600 (invalid request) on GET and DELETE /mcp, POST /mcp/messages, and on a POST /mcp that is not initialize', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await call(api, method, '/mcp', 'key_a');
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('Mcp-Session-Id') } });
    }
    const messages = await call(api, 'POST', '/mcp/messages', 'key_a', { body: { jsonrpc: '2.0', id: 4, method: 'tools/list' } });
    expect(messages.status).toBe(400);
    expect(await messages.json()).toMatchObject({ jsonrpc: '2.0', id: 4, error: { code: -32600 } });
    const notInit = await call(api, 'POST', '/mcp', 'key_a', { body: { jsonrpc: '2.0', id: 5, method: 'tools/list' } });
    expect(notInit.status).toBe(400);
    expect(await notInit.json()).toMatchObject({ jsonrpc: '2.0', id: 5, error: { code: -32600 } });
  });

  it("another user's MCP session looks exactly like an unknown one, and their DELETE leaves it open", async () => {
    const mine = await initialize(api, 'key_a');
    expect(mine.status).toBe(200);
    const session = mine.session!;
    const unknown = await call(api, 'POST', '/mcp', 'key_b', { session: 'no-such-session', body: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} } });
    const theirs = await toolsList(api, 'key_b', session);
    expect([theirs.status, await theirs.json()]).toEqual([unknown.status, await unknown.json()]);
    for (const method of ['GET', 'DELETE']) {
      const res = await call(api, method, '/mcp', 'key_b', { session });
      expect(res.status).toBe(404);
      expect((await res.json()).error).toEqual({ code: -32603, message: 'MCP session not found' });
    }
    const still = await toolsList(api, 'key_a', session);
    expect(still.status).toBe(200);
    expect((await rpcBody(still)).result.tools).toHaveLength(6);
    expect((await call(api, 'DELETE', '/mcp', 'key_a', { session })).status).toBe(200);
  });

  it('a tool call naming an unknown or another user\'s browser session is the JSON-RPC error -32603, not a tool result', async () => {
    const client = await connectClient(api, 'key_a');
    try {
      for (const sessionId of ['ses_unknown', 'ses_of_b']) {
        const err = await client.callTool({ name: 'get_task_status', arguments: { sessionId, taskId: 'task_x' } }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(McpError);
        expect((err as McpError).code).toBe(-32603);
        expect((err as McpError).message).toBe('MCP error -32603: Session not found');
      }
      // A session that ends under the call (the service says SESSION_NOT_FOUND) too.
      BROWSER_SESSIONS.ses_of_a = { userId: 'usr_a', status: 'active' };
      await expect(client.callTool({ name: 'control_session', arguments: { sessionId: 'ses_of_a', action: 'terminate' } })).rejects.toMatchObject({ code: -32603 });
      // Other refusals are still tool errors with the service's code.
      const missing = (await client.callTool({ name: 'get_task_status', arguments: { sessionId: 'ses_of_a', taskId: 'task_x' } })) as any;
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent).toMatchObject({ success: false, code: 'TASK_NOT_FOUND' });
      const invalid = (await client.callTool({ name: 'get_task_status', arguments: { sessionId: 'ses_of_a' } })) as any;
      expect(invalid.structuredContent).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'taskId' } });
      // Resources say the same as the tools.
      await expect(client.readResource({ uri: 'session://ses_of_b' })).rejects.toMatchObject({ code: -32603, message: 'MCP error -32603: Session not found' });
    } finally {
      delete BROWSER_SESSIONS.ses_of_a;
      await client.close();
    }
  });

  it('the wire answer of such a tool call is {jsonrpc, id, error: {code: -32603, message}}', async () => {
    const { session } = await initialize(api, 'key_a');
    const res = await call(api, 'POST', '/mcp', 'key_a', { session: session!, body: { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_task_status', arguments: { sessionId: 'ses_unknown', taskId: 't' } } } });
    expect(res.status).toBe(200);
    expect(await rpcBody(res)).toEqual({ jsonrpc: '2.0', id: 9, error: { code: -32603, message: 'Session not found' } });
    await call(api, 'DELETE', '/mcp', 'key_a', { session: session! });
  });
});

describe('MCP endpoint: bounded sessions', () => {
  let api: Api;
  afterEach(() => stopApi(api));

  it('refuses the initialize beyond MCP_MAX_SESSIONS_PER_USER with 429 and -32600; other users are not counted; a DELETE frees a slot', async () => {
    api = await startApi({ MCP_MAX_SESSIONS_PER_USER: 2 });
    const first = await initialize(api, 'key_a');
    const second = await initialize(api, 'key_a');
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await initialize(api, 'key_a');
    expect(third.status).toBe(429);
    expect(third.session).toBeNull();
    expect(third.body).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32600, message: expect.stringMatching(/^Too many open MCP sessions: at most 2 per user/) } });
    // The SSE transport counts against the same cap.
    const sse = await call(api, 'GET', '/mcp/sse', 'key_a');
    expect(sse.status).toBe(429);
    expect((await sse.json()).error.code).toBe(-32600);
    expect((await initialize(api, 'key_b')).status).toBe(200);

    expect((await call(api, 'DELETE', '/mcp', 'key_a', { session: first.session! })).status).toBe(200);
    expect((await toolsList(api, 'key_a', first.session!)).status).toBe(404);
    expect((await toolsList(api, 'key_a', second.session!)).status).toBe(200);
    const again = await initialize(api, 'key_a');
    expect(again.status).toBe(200);
    expect((await initialize(api, 'key_a')).status).toBe(429);
  });

  it('a refused or failed initialize does not keep a slot', async () => {
    api = await startApi({ MCP_MAX_SESSIONS_PER_USER: 1 });
    // An initialize the transport refuses (no Accept for event streams) opens nothing.
    const refused = await fetch(`${api.base}/mcp`, { method: 'POST', headers: { authorization: 'Bearer key_a', 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(INIT) });
    expect(refused.status).toBe(406);
    await refused.text();
    expect((await initialize(api, 'key_a')).status).toBe(200);
  });

  it('an SSE stream holds a slot until it closes', async () => {
    api = await startApi({ MCP_MAX_SESSIONS_PER_USER: 1 });
    const ctrl = new AbortController();
    const stream = await fetch(`${api.base}/mcp/sse`, { headers: { authorization: 'Bearer key_a' }, signal: ctrl.signal });
    expect(stream.status).toBe(200);
    expect((await initialize(api, 'key_a')).status).toBe(429);
    ctrl.abort();
    await stream.body?.cancel().catch(() => undefined);
    let status = 429;
    for (let i = 0; i < 50 && status === 429; i += 1) {
      await sleep(20);
      status = (await initialize(api, 'key_a')).status;
    }
    expect(status).toBe(200);
  });

  it('closes an MCP session idle for MCP_SESSION_IDLE_MS and frees its slot; requests keep it open', async () => {
    api = await startApi({ MCP_MAX_SESSIONS_PER_USER: 1, MCP_SESSION_IDLE_MS: 800 });
    const kept = await initialize(api, 'key_a');
    // Longer than the idle time in all, never that long between two requests.
    for (let i = 0; i < 5; i += 1) {
      await sleep(200);
      expect((await toolsList(api, 'key_a', kept.session!)).status).toBe(200);
    }
    await sleep(1300);
    const expired = await toolsList(api, 'key_a', kept.session!);
    expect(expired.status).toBe(404);
    expect((await expired.json()).error).toEqual({ code: -32603, message: 'MCP session not found' });
    expect((await initialize(api, 'key_a')).status).toBe(200);
  });

  it('closing the router (API shutdown) closes every MCP session', async () => {
    api = await startApi({ MCP_MAX_SESSIONS_PER_USER: 2 });
    const a = await initialize(api, 'key_a');
    await api.router.close();
    expect((await toolsList(api, 'key_a', a.session!)).status).toBe(404);
    expect((await initialize(api, 'key_a')).status).toBe(200);
  });
});
