/** The MCP resources: the caller's live sessions and their tasks. */
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { taskEnvelope } from '../../contracts/envelopes';
import { fileLinks } from '../../files/links';
import { ownSession, type McpCaller } from './mcp.caller';
import { JsonRpcError } from './tool-call';

const notFound = (what: string) => new JsonRpcError(ErrorCode.InternalError, `${what} not found`);
const json = (uri: URL, body: unknown) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(body) }] });

async function sessionJson(caller: McpCaller, sessionId: string) {
  const rec = await ownSession(caller, sessionId);
  if (!rec) throw notFound('Session');
  return { sessionId, status: rec.status, endReason: rec.endReason ?? null, createdAt: rec.createdAt.toISOString(), tasks: await caller.deps.store.tasks.idsOfSession(caller.user._id, sessionId) };
}

async function taskJson(caller: McpCaller, sessionId: string, taskId: string) {
  if (!(await ownSession(caller, sessionId))) throw notFound('Session');
  const view = await caller.deps.sessions.task(sessionId, taskId);
  if (!view) throw notFound('Task');
  return taskEnvelope(fileLinks(caller.deps.config), view, { withCompletedAt: true }).body;
}

async function taskList(caller: McpCaller) {
  const { store } = caller.deps;
  const live = await store.sessions.liveIds(caller.user._id);
  const out: { uri: string; name: string; mimeType: string }[] = [];
  for (const sid of live) for (const tid of await store.tasks.idsOfSession(caller.user._id, sid)) out.push({ uri: `task://${sid}/${tid}`, name: `Task ${tid}`, mimeType: 'application/json' });
  return { resources: out };
}

export function registerResources(server: McpServer, caller: McpCaller): void {
  const { store } = caller.deps;
  server.registerResource(
    'session',
    new ResourceTemplate('session://{sessionId}', {
      list: async () => ({
        resources: (await store.sessions.liveIds(caller.user._id)).map((id) => ({ uri: `session://${id}`, name: `Session ${id}`, mimeType: 'application/json' })),
      }),
    }),
    { title: 'Live browser session', description: 'A live session of the caller: status and task ids', mimeType: 'application/json' },
    async (uri, { sessionId }) => json(uri, await sessionJson(caller, String(sessionId))),
  );

  server.registerResource(
    'task',
    new ResourceTemplate('task://{sessionId}/{taskId}', { list: () => taskList(caller) }),
    { title: 'Task result', description: 'A task of the caller, as polling sees it', mimeType: 'application/json' },
    async (uri, { sessionId, taskId }) => json(uri, await taskJson(caller, String(sessionId), String(taskId))),
  );
}
