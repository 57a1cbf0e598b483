import { fileLinks } from '../../files/links';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type CallToolResult, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../../config';
import { isServiceError, RateLimitError, ServiceError } from '../../contracts/errors';
import type { Logger } from '../../logger';
import type { Store } from '../../store/store';
import type { UserRecord } from '../../store/users.repository';
import type { TaskView } from '../../contracts/session-types';
import { taskEnvelope } from '../../contracts/envelopes';
import { countRequest } from '../middleware/rate-limit';
import { taskParamsSchema } from '../../contracts/schemas/task.schema';
import { parseRequest, toServiceError } from '../../contracts/schemas/validation';
import type { z } from 'zod';
import type { SessionsService } from '../../sessions/sessions.service';
import { TASK_PLACES } from '../../sessions/task-checks';
import { browserTaskInput, controlSessionInput, createSessionInput, getTaskStatusInput, sendTaskInput, takeOverInput } from './tool-schemas';

const PROGRESS_POLL_MS = 500;

export interface McpDeps {
  config: Config;
  store: Store;
  sessions: SessionsService;
  logger: Logger;
  /** Counts a task-starting call against the user's per-minute limit (shared with REST). */
  limit: { redis: import('ioredis').Redis; limit: number; windowMs: number };
}

interface ToolExtra {
  _meta?: { progressToken?: string | number };
  signal: AbortSignal;
  sendNotification: (n: ServerNotification) => Promise<void>;
}

const result = (structured: Record<string, unknown>, text: string): CallToolResult => ({ content: [{ type: 'text', text }], structuredContent: structured });

/** A service error as an MCP tool error: `isError`, the code in the text and in the structured content. */
function toolError(err: unknown): CallToolResult {
  const e = isServiceError(err) ? err : new ServiceError('INTERNAL_ERROR', 'Internal server error');
  return { isError: true, content: [{ type: 'text', text: `${e.code}: ${e.message}` }], structuredContent: e.toBody() };
}

const INVALID = Symbol('invalid arguments');
const ESCALATE = Symbol('JSON-RPC error of the call');

/** The contract's MCP codes (Errors, Formats): -32603 session not found, -32600 invalid request. */
export const MCP_SESSION_NOT_FOUND = ErrorCode.InternalError;
export const MCP_INVALID_REQUEST = ErrorCode.InvalidRequest;

/** A JSON-RPC error whose message is the text itself (McpError prefixes "MCP error <code>: "). */
class JsonRpcError extends McpError {
  constructor(code: number, message: string) {
    super(code, message);
    this.message = message;
  }
}

/** A browser session the caller does not have (unknown, ended or another user's): JSON-RPC -32603. */
const sessionNotFound = (message = 'Session not found') => new JsonRpcError(MCP_SESSION_NOT_FOUND, message);
const isSessionNotFound = (err: unknown): err is ServiceError => isServiceError(err) && err.code === 'SESSION_NOT_FOUND';

type CallExtra = Record<PropertyKey, unknown> & { [ESCALATE]?: { error?: McpError } };

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
  const { config, store, sessions } = deps;
  const logger = deps.logger.child({ component: 'mcp', userId: user._id });
  const server = new McpServer({ name: 'browser-agent-service', version: '1.0.0' }, { capabilities: { logging: {} } });
  checkArgumentsLikeRest(server);

  const freshUser = async (): Promise<UserRecord> => (await store.users.get(user._id)) ?? user;
  const countStart = async () => {
    const counted = await countRequest({ redis: deps.limit.redis, name: 'start', limit: deps.limit.limit, windowMs: deps.limit.windowMs }, user._id);
    if (!counted.allowed) throw new RateLimitError();
  };
  const owned = async (sessionId: string) => {
    const rec = await store.sessions.get(sessionId);
    // Another user's session looks exactly like an unknown one.
    if (!rec || rec.userId !== user._id) throw new ServiceError('SESSION_NOT_FOUND', 'Session not found');
    return rec;
  };
  const envelopeText = (view: TaskView) => {
    const env = taskEnvelope(fileLinks(config), view, { withCompletedAt: true });
    const body = env.body as { data?: { message?: string; value?: string }; error?: string };
    const line =
      view.status === 'task_completed'
        ? body.data?.message ?? ''
        : view.status === 'guardrail_trigger'
          ? `The agent needs a human: ${body.data?.value ?? ''} (answer with a guardrail message to session ${view.sessionId})`
          : view.status === 'failed'
            ? `Task failed (${view.code}): ${body.error}`
            : `Task ${view.status}`;
    return result(env.body, line);
  };

  /** Waits for the task to end or ask for a human, sending the agent's steps as progress notifications. */
  const settle = async (sessionId: string, taskId: string, extra: ToolExtra): Promise<TaskView | null> => {
    const token = extra._meta?.progressToken;
    let seq = 0;
    let steps = 0;
    const timer =
      token === undefined
        ? undefined
        : setInterval(() => {
            void (async () => {
              for (const e of await store.events.after(sessionId, seq)) {
                seq = e.seq;
                if (e.event !== 'message' || e.payload.type !== 'action') continue;
                steps += 1;
                const target = e.payload.data.target ? ` ${e.payload.data.target}` : '';
                await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: steps, message: `${e.payload.data.name}${target}` } });
              }
            })().catch((err) => logger.debug({ err }, 'progress notification failed'));
          }, PROGRESS_POLL_MS);
    try {
      const view = await sessions.outcome(sessionId, taskId, { deadline: Date.now() + 360_000, stopped: () => extra.signal.aborted });
      return view ?? sessions.task(sessionId, taskId);
    } finally {
      if (timer) clearInterval(timer);
    }
  };

  const run = (fn: (extra: ToolExtra) => Promise<CallToolResult>) => async (extra: ToolExtra & { [INVALID]?: ServiceError; [ESCALATE]?: { error?: McpError } }) => {
    if (extra[INVALID]) return toolError(extra[INVALID]);
    try {
      return await fn(extra);
    } catch (err) {
      if (isSessionNotFound(err) && extra[ESCALATE]) {
        // Answered as the JSON-RPC error -32603 (see answerSessionNotFoundAsJsonRpcError).
        extra[ESCALATE].error = sessionNotFound(err.message);
        return toolError(err);
      }
      if (!isServiceError(err)) logger.error({ err }, 'MCP tool failed');
      return toolError(err);
    }
  };

  server.registerTool(
    'browser_task',
    {
      title: 'Run a browser task',
      description: 'Runs a prompt to the end in a new browser session (closed afterwards) and returns the result envelope: data.message, usage, files.',
      inputSchema: browserTaskInput,
    },
    (args, extra) =>
      run(async (x) => {
        await countStart();
        const { environmentId, ...task } = args;
        const params = parseRequest(taskParamsSchema, { ...task, terminateOnCompletion: true });
        const started = await sessions.start(await freshUser(), params, { environmentId: environmentId ?? null }, TASK_PLACES.tool);
        const view = await settle(started.sessionId, started.taskId!, x);
        if (!view) throw new ServiceError('TASK_NOT_FOUND', 'Task not found');
        return envelopeText(view);
      })(extra),
  );

  server.registerTool(
    'create_session',
    { title: 'Create a browser session', description: 'Starts a persistent browser session; send tasks to it with send_task_to_session.', inputSchema: createSessionInput },
    (args, extra) =>
      run(async () => {
        await countStart();
        const started = await sessions.start(await freshUser(), undefined, { environmentId: args.environmentId ?? null, profileId: args.profileId ?? null, policyId: args.policyId ?? null, reachOutMode: args.reachOutMode, reachOutModeGiven: args.reachOutMode !== undefined });
        const token = sessions.viewToken(started.sessionId);
        const body = {
          success: true,
          sessionId: started.sessionId,
          webViewURL: `${config.PUBLIC_BASE_URL}/view/${started.sessionId}?token=${token}`,
          expiresIn: config.SESSION_IDLE_TIMEOUT_MS,
          balance: started.balance,
        };
        return result(body, `Session ${started.sessionId} started; live view: ${body.webViewURL}`);
      })(extra),
  );

  server.registerTool(
    'send_task_to_session',
    { title: 'Run a task in a session', description: 'Runs a prompt in an existing session and waits for its result (or a guardrail).', inputSchema: sendTaskInput },
    (args, extra) =>
      run(async (x) => {
        await countStart();
        const { sessionId, ...task } = args;
        await owned(sessionId);
        const params = parseRequest(taskParamsSchema, task);
        const taskId = await sessions.newTask(await freshUser(), sessionId, params, TASK_PLACES.tool);
        const view = await settle(sessionId, taskId, x);
        if (!view) throw new ServiceError('TASK_NOT_FOUND', 'Task not found');
        return envelopeText(view);
      })(extra),
  );

  server.registerTool(
    'get_task_status',
    { title: 'Task status', description: 'The task as polling sees it: running, paused, guardrail_trigger, stopped, task_completed or failed.', inputSchema: getTaskStatusInput },
    (args, extra) =>
      run(async () => {
        await owned(args.sessionId);
        const view = await sessions.task(args.sessionId, args.taskId);
        if (!view) throw new ServiceError('TASK_NOT_FOUND', 'Task not found');
        return envelopeText(view);
      })(extra),
  );

  server.registerTool(
    'control_session',
    { title: 'Control a session', description: 'pause, resume or stop the running task, or terminate the session.', inputSchema: controlSessionInput },
    (args, extra) =>
      run(async () => {
        await owned(args.sessionId);
        const message = await sessions.changeState(await freshUser(), args.sessionId, args.action);
        return result({ success: true, message }, message);
      })(extra),
  );

  server.registerTool(
    'take_over_control',
    { title: 'Take over or release', description: 'take_over pauses the agent so a human can drive the browser (live view); release hands control back.', inputSchema: takeOverInput },
    (args, extra) =>
      run(async () => {
        await owned(args.sessionId);
        const message = await sessions.interact(await freshUser(), args.sessionId, { type: args.action === 'take_over' ? 'takeOverControl' : 'releaseControl' });
        return result({ success: true, message }, message);
      })(extra),
  );

  answerSessionNotFoundAsJsonRpcError(server);

  // ---- resources: the caller's live sessions and their tasks -------------------------------
  const notFound = (what: string) => new JsonRpcError(ErrorCode.InternalError, `${what} not found`);
  const sessionJson = async (sessionId: string) => {
    const rec = await store.sessions.get(sessionId);
    if (!rec || rec.userId !== user._id) throw notFound('Session');
    return { sessionId, status: rec.status, endReason: rec.endReason ?? null, createdAt: rec.createdAt.toISOString(), tasks: await store.tasks.idsOfSession(user._id, sessionId) };
  };

  server.registerResource(
    'session',
    new ResourceTemplate('session://{sessionId}', {
      list: async () => ({
        resources: (await store.sessions.liveIds(user._id)).map((id) => ({ uri: `session://${id}`, name: `Session ${id}`, mimeType: 'application/json' })),
      }),
    }),
    { title: 'Live browser session', description: 'A live session of the caller: status and task ids', mimeType: 'application/json' },
    async (uri, { sessionId }) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(await sessionJson(String(sessionId))) }] }),
  );

  server.registerResource(
    'task',
    new ResourceTemplate('task://{sessionId}/{taskId}', {
      list: async () => {
        const live = await store.sessions.liveIds(user._id);
        const out: { uri: string; name: string; mimeType: string }[] = [];
        for (const sid of live) for (const tid of await store.tasks.idsOfSession(user._id, sid)) out.push({ uri: `task://${sid}/${tid}`, name: `Task ${tid}`, mimeType: 'application/json' });
        return { resources: out };
      },
    }),
    { title: 'Task result', description: 'A task of the caller, as polling sees it', mimeType: 'application/json' },
    async (uri, { sessionId, taskId }) => {
      const rec = await store.sessions.get(String(sessionId));
      if (!rec || rec.userId !== user._id) throw notFound('Session');
      const view = await sessions.task(String(sessionId), String(taskId));
      if (!view) throw notFound('Task');
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(taskEnvelope(fileLinks(config), view, { withCompletedAt: true }).body) }] };
    },
  );

  return server;
}
