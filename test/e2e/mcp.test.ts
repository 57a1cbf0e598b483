import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { api, waitFor } from '../support/http';
import { registerScript } from '../support/scripted-model';
import { createUser } from '../support/service';
import { connectMcp, type ToolResult } from '../support/mcp';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

const connect = (apiKey: string, transport: 'streamable' | 'sse'): Promise<Client> => connectMcp(base(), apiKey, transport);

describe('MCP server', () => {
  const clients: Client[] = [];
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
  });

  it('refuses requests without a valid API key with 401', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const noKey = await api(base(), 'POST', '/mcp', { body: init, headers: { accept: 'application/json, text/event-stream' } });
    expect(noKey.status).toBe(401);
    expect((await api(base(), 'POST', '/mcp', { key: 'bas_wrong', body: init, headers: { accept: 'application/json, text/event-stream' } })).status).toBe(401);
    expect((await api(base(), 'GET', '/mcp/sse')).status).toBe(401);
    expect((await api(base(), 'POST', '/mcp/messages?sessionId=x', { body: init })).status).toBe(401);
  });

  // JSON-RPC error bodies are read with plain fetch: the api() helper checks error bodies
  // against the REST error envelope of the OpenAPI document, which they are not.
  const rpc = async (method: string, path: string, apiKey: string, opts: { body?: unknown; session?: string } = {}) => {
    const res = await fetch(`${base()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        accept: 'application/json, text/event-stream',
        ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(opts.session ? { 'mcp-session-id': opts.session } : {}),
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    return { status: res.status, body: (res.headers.get('content-type') ?? '').includes('application/json') ? JSON.parse(text) : text };
  };
  const sessionIdOf = (client: Client) => (client as unknown as { transport: StreamableHTTPClientTransport }).transport.sessionId!;

  it("answers an unknown, missing or another user's MCP session id with the contract's JSON-RPC codes", async () => {
    const owner = await createUser({ balance: 10 });
    const other = await createUser({ balance: 10 });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const unknown = await rpc('POST', '/mcp', owner.apiKey, { body: list, session: 'no-such-session' });
    expect(unknown).toEqual({ status: 404, body: { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'MCP session not found' } } });
    for (const method of ['GET', 'DELETE']) {
      expect(await rpc(method, '/mcp', owner.apiKey)).toMatchObject({ status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32600 } } });
      expect(await rpc(method, '/mcp', owner.apiKey, { session: 'no-such-session' })).toMatchObject({ status: 404, body: { error: { code: -32603 } } });
    }
    expect(await rpc('POST', '/mcp/messages?sessionId=no-such-session', owner.apiKey, { body: list })).toMatchObject({ status: 404, body: { error: { code: -32603 } } });

    const mine = await connect(owner.apiKey, 'streamable');
    clients.push(mine);
    const sid = sessionIdOf(mine);
    expect(await rpc('POST', '/mcp', other.apiKey, { body: list, session: sid })).toEqual(unknown);
    expect((await rpc('DELETE', '/mcp', other.apiKey, { session: sid })).status).toBe(404);
    expect((await mine.listTools()).tools).toHaveLength(6);
  });

  it('refuses an MCP session beyond the per-user cap (MCP_MAX_SESSIONS_PER_USER) with 429 and -32600; closing one frees its slot', async () => {
    const { apiKey } = await createUser({ balance: 10 });
    const cap = 10; // the default: the test service does not set MCP_MAX_SESSIONS_PER_USER
    const open: Client[] = [];
    for (let i = 0; i < cap; i += 1) open.push(await connect(apiKey, 'streamable'));
    clients.push(...open);
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const refused = await rpc('POST', '/mcp', apiKey, { body: init });
    expect(refused).toMatchObject({ status: 429, body: { jsonrpc: '2.0', id: 1, error: { code: -32600, message: expect.stringContaining(`at most ${cap} per user`) } } });
    // DELETE /mcp (the SDK's terminateSession) frees the slot.
    await (open[0] as unknown as { transport: StreamableHTTPClientTransport }).transport.terminateSession();
    const again = await connect(apiKey, 'streamable');
    clients.push(again);
    expect((await again.listTools()).tools).toHaveLength(6);
  });

  it('over streamable HTTP: lists the tools with their schemas, runs browser_task on a local page with progress, reads its status and resources', async () => {
    const { apiKey } = await createUser({ balance: 10 });
    const client = await connect(apiKey, 'streamable');
    clients.push(client);

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['browser_task', 'control_session', 'create_session', 'get_task_status', 'send_task_to_session', 'take_over_control']);
    const browserTask = tools.find((t) => t.name === 'browser_task')!;
    expect(browserTask.inputSchema.required).toContain('prompt');
    expect(Object.keys(browserTask.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['prompt', 'startingUrl', 'outputType', 'outputSchema', 'environmentId']));
    // the same bounds as the REST API's task schema
    expect((browserTask.inputSchema.properties as any).maxDuration).toMatchObject({ minimum: 1000, maximum: 300000 });
    expect((tools.find((t) => t.name === 'control_session')!.inputSchema.properties as any).action.enum).toEqual(['pause', 'resume', 'stop', 'terminate']);

    const t = token('mcp');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'scroll', args: { direction: 'down' }, delayMs: 700 },
        { tool: 'scroll', args: { direction: 'up' }, delayMs: 700 },
        { tool: 'done', args: { message: 'MCP saw {{find:Title: ([^\\n]+)}}' }, delayMs: 700 },
      ],
    });
    const progress: { progress: number; message?: string }[] = [];
    const res = (await client.callTool(
      { name: 'browser_task', arguments: { prompt: `${t} read the title`, startingUrl: `${fixtures()}/about.html` } },
      undefined,
      { onprogress: (p) => progress.push(p), timeout: 90_000 },
    )) as ToolResult;
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ success: true, type: 'task_completed', data: { message: expect.stringContaining('MCP saw About') }, usage: { total_tokens: expect.any(Number) } });
    expect(res.content[0].text).toContain('MCP saw About');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.map((p) => p.message).join(' ')).toMatch(/scroll/);

    const { sessionId, taskId } = res.structuredContent;
    const status = (await client.callTool({ name: 'get_task_status', arguments: { sessionId, taskId } })) as ToolResult;
    expect(status.structuredContent).toMatchObject({ status: 'task_completed', completedAt: expect.any(String) });
    const read = await client.readResource({ uri: `task://${sessionId}/${taskId}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ type: 'task_completed', taskId });

    // A persistent session shows up among the resources until it is terminated.
    const created = (await client.callTool({ name: 'create_session', arguments: {} })) as ToolResult;
    const live = created.structuredContent.sessionId as string;
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain(`session://${live}`);
    const session = JSON.parse(((await client.readResource({ uri: `session://${live}` })).contents[0] as { text: string }).text);
    expect(session).toMatchObject({ sessionId: live, tasks: [] });
    // The record may still say pending for a moment after the browser is up.
    expect(['pending', 'active']).toContain(session.status);
    const ended = (await client.callTool({ name: 'control_session', arguments: { sessionId: live, action: 'terminate' } })) as ToolResult;
    expect(ended.structuredContent).toEqual({ success: true, message: 'Session terminated' });
    await waitFor(async () => !(await client.listResources()).resources.some((r) => r.uri === `session://${live}`), 10_000);

    // Bad input is a tool error carrying the service's code.
    const bad = (await client.callTool({ name: 'browser_task', arguments: { prompt: 'x', maxDuration: 5 } })) as ToolResult;
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ success: false, code: 'INVALID_PARAMETER', details: { parameter: 'maxDuration', value: 5, min: 1000, max: 300000 } });
    expect(bad.content[0].text).toBe('INVALID_PARAMETER: maxDuration must be between 1000 and 300000');
    const noPrompt = (await client.callTool({ name: 'send_task_to_session', arguments: { sessionId: live } })) as ToolResult;
    expect(noPrompt.structuredContent).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'prompt' } });
  });

  it("over SSE: another user's session is not found; take over and release work on one's own", async () => {
    const owner = await createUser({ balance: 10 });
    const other = await createUser({ balance: 10 });
    const mine = await connect(owner.apiKey, 'sse');
    const theirs = await connect(other.apiKey, 'sse');
    clients.push(mine, theirs);
    expect((await mine.listTools()).tools).toHaveLength(6);

    const created = (await mine.callTool({ name: 'create_session', arguments: {} })) as ToolResult;
    expect(created.isError).toBeFalsy();
    const sessionId = created.structuredContent.sessionId as string;

    // Another user's (or an unknown) browser session is the JSON-RPC error -32603 of the contract, not a tool result.
    for (const [name, args] of [
      ['get_task_status', { sessionId, taskId: 'task_x' }],
      ['control_session', { sessionId, action: 'terminate' }],
      ['take_over_control', { sessionId, action: 'take_over' }],
      ['send_task_to_session', { sessionId, prompt: 'do something' }],
      ['get_task_status', { sessionId: 'ses_unknown', taskId: 'task_x' }],
    ] as const) {
      await expect(theirs.callTool({ name, arguments: args })).rejects.toMatchObject({ code: -32603, message: 'MCP error -32603: Session not found' });
    }
    await expect(theirs.readResource({ uri: `session://${sessionId}` })).rejects.toMatchObject({ code: -32603, message: expect.stringMatching(/not found/i) });
    expect((await theirs.listResources()).resources).toEqual([]);

    const taken = (await mine.callTool({ name: 'take_over_control', arguments: { sessionId, action: 'take_over' } })) as ToolResult;
    expect(taken.structuredContent).toMatchObject({ success: true, message: expect.stringMatching(/^Manual control taken/) });
    const released = (await mine.callTool({ name: 'take_over_control', arguments: { sessionId, action: 'release' } })) as ToolResult;
    expect(released.structuredContent).toMatchObject({ success: true, message: expect.stringMatching(/^Control returned/) });
    const ended = (await mine.callTool({ name: 'control_session', arguments: { sessionId, action: 'terminate' } })) as ToolResult;
    expect(ended.structuredContent).toEqual({ success: true, message: 'Session terminated' });
  });
});
