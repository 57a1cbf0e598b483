import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { ServiceError } from '../../contracts/errors';
import { toServiceError } from '../../contracts/schemas/validation';
import type { UserRecord } from '../../store/users.repository';
import type { McpCaller, McpDeps } from './mcp.caller';
import { registerResources } from './mcp.resources';
import { registerSessionTools, registerTaskTools } from './mcp.tools';
import { ESCALATE, INVALID, type CallExtra } from './tool-call';

export type { McpDeps } from './mcp.caller';
export { MCP_INVALID_REQUEST, MCP_SESSION_NOT_FOUND } from './tool-call';

/**
 * The SDK turns anything a tool throws into a tool result with `isError`. A session that is
 * not found is a JSON-RPC error of the call instead (-32603, as the contract says): the
 * tool leaves it in the call's holder and this wrapper of tools/call throws it, and the
 * SDK answers the request with `{jsonrpc, id, error: {code, message}}`.
 */
function answerSessionNotFoundAsJsonRpcError(server: McpServer): void {
  type Handler = (request: unknown, extra: CallExtra) => Promise<unknown>;
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  const original = handlers.get('tools/call');
  if (!original) throw new Error('tools/call is not handled: register the tools first');
  handlers.set('tools/call', async (request, extra) => {
    const holder: { error?: McpError } = {};
    const answer = await original(request, { ...extra, [ESCALATE]: holder });
    if (holder.error) throw holder.error;
    return answer;
  });
}

/**
 * The SDK answers arguments its schema refuses with a bare text error. Here they get the
 * REST API's error (MISSING_REQUIRED_FIELD, INVALID_PARAMETER with bounds) as a tool error
 * with the code: the refusal rides to the tool's callback, which answers it.
 */
function checkArgumentsLikeRest(server: McpServer): void {
  type Validate = (tool: { inputSchema?: z.ZodType }, args: unknown, name: string) => Promise<unknown>;
  const sdk = server as unknown as { validateToolInput: Validate; executeToolHandler: (tool: unknown, args: unknown, extra: Record<PropertyKey, unknown>) => Promise<unknown> };
  const execute = sdk.executeToolHandler.bind(server);
  const refused = new WeakMap<object, ServiceError>();
  sdk.validateToolInput = async (tool, args) => {
    const parsed = tool.inputSchema?.safeParse(args ?? {});
    if (!parsed || parsed.success) return parsed?.data;
    const holder = {};
    refused.set(holder, toServiceError(parsed.error, args ?? {}));
    return holder;
  };
  sdk.executeToolHandler = (tool, args, extra) => {
    const err = args && typeof args === 'object' ? refused.get(args) : undefined;
    return execute(tool, err ? {} : args, err ? { ...extra, [INVALID]: err } : extra);
  };
}

/**
 * One MCP server per connection, bound to the user whose API key opened it: the tools run
 * on the same sessions service as the REST API, so every check and limit is the same
 * (the task's own checks included: src/sessions/task-checks.ts).
 */
export function createMcpServer(deps: McpDeps, user: UserRecord): McpServer {
  const caller: McpCaller = { deps, user, logger: deps.logger.child({ component: 'mcp', userId: user._id }) };
  const server = new McpServer({ name: 'browser-agent-service', version: '1.0.0' }, { capabilities: { logging: {} } });
  checkArgumentsLikeRest(server);
  registerTaskTools(server, caller);
  registerSessionTools(server, caller);
  answerSessionNotFoundAsJsonRpcError(server);
  registerResources(server, caller);
  return server;
}
