import { randomUUID } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Logger } from '../../logger';
import { currentUser } from '../middleware/auth';
import { createMcpServer, MCP_INVALID_REQUEST, MCP_SESSION_NOT_FOUND, type McpDeps } from '../mcp/mcp.server';
import { McpConnections, type McpConnection } from '../mcp/mcp.connections';
import { mcpInitializeRequestSchema, mcpMessageSchema } from '../mcp/mcp.schemas';

/** The request's own id when it is one JSON-RPC request, null otherwise (JSON-RPC 2.0, section 5). */
const requestId = (req: Request): string | number | null => {
  const id = (req.body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};

const jsonRpcError = (req: Request, res: Response, status: number, code: number, message: string) => {
  res.status(status).json({ jsonrpc: '2.0', id: requestId(req), error: { code, message } });
};

const STREAMS = 'application/json, text/event-stream';

/**
 * The SDK's transport wants an Accept header that names both application/json and
 * text/event-stream (406 otherwise). A client that sends none, or one with * / *, accepts
 * either: it is given the two by name.
 */
function acceptAnything(req: Request): void {
  const accept = req.headers.accept;
  if (accept && !accept.includes('*/*')) return;
  req.headers.accept = STREAMS;
  const raw = req.rawHeaders;
  let found = false;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() === 'accept') {
      raw[i + 1] = STREAMS;
      found = true;
    }
  }
  if (!found) raw.push('Accept', STREAMS);
}

/** An unknown MCP session, another user's included (they look the same). */
const sessionNotFound = (req: Request, res: Response) => jsonRpcError(req, res, 404, MCP_SESSION_NOT_FOUND, 'MCP session not found');

export type McpRouter = Router & {
  /** Closes every open MCP session (API shutdown); their idle timers go with them. */
  close(): Promise<void>;
};

/** What the MCP routes share: the services, the open MCP sessions, the logger. */
interface McpDoors {
  deps: McpDeps;
  connections: McpConnections;
  logger: Logger;
}

/** The caller's own open MCP session (its idle timer restarts), or undefined. */
function ownConnection(doors: McpDoors, req: Request, id: string | undefined): McpConnection | undefined {
  const c = doors.connections.get(id);
  if (!c || c.userId !== currentUser(req)._id) return undefined;
  doors.connections.touch(id!);
  return c;
}

const atCap = (doors: McpDoors, req: Request, res: Response) =>
  jsonRpcError(
    req,
    res,
    429,
    MCP_INVALID_REQUEST,
    `Too many open MCP sessions: at most ${doors.connections.maxPerUser} per user. Close one (DELETE /mcp with its Mcp-Session-Id) or let an idle one expire (${Math.round(doors.deps.config.MCP_SESSION_IDLE_MS / 1000)} s without a request)`,
  );

const closeServer = (doors: McpDoors, server: McpServer) => void server.close().catch((err: unknown) => doors.logger.debug({ err }, 'closing an MCP connection failed'));

/** An initialize without a session id: opens a streamable HTTP MCP session in a free slot of the user. */
async function openStreamable(doors: McpDoors, req: Request, res: Response): Promise<void> {
  if (!mcpInitializeRequestSchema.safeParse(req.body).success) return jsonRpcError(req, res, 400, MCP_INVALID_REQUEST, 'Invalid request: start with initialize (no Mcp-Session-Id yet)');
  const { connections } = doors;
  const user = currentUser(req);
  const slot = connections.reserve(user._id);
  if (!slot) return atCap(doors, req, res);
  const server = createMcpServer(doors.deps, user);
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sid) => connections.add(sid, slot, { userId: user._id, server, transport }),
  });
  transport.onclose = () => {
    if (transport.sessionId) connections.remove(transport.sessionId);
    slot.release();
  };
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  } finally {
    // An initialize that did not open a session gives its slot back.
    if (!transport.sessionId || connections.get(transport.sessionId)?.server !== server) {
      slot.release();
      closeServer(doors, server);
    }
  }
}

/** POST /mcp: a message of an open streamable HTTP session, or an initialize that opens one. */
const postStreamable =
  (doors: McpDoors): RequestHandler =>
  async (req, res) => {
    acceptAnything(req);
    // An empty header is a session id too (an unknown one), not the absence of one.
    const id = req.get('mcp-session-id');
    if (id === undefined) return openStreamable(doors, req, res);
    const existing = ownConnection(doors, req, id);
    if (!existing || !(existing.transport instanceof StreamableHTTPServerTransport)) return sessionNotFound(req, res);
    await existing.transport.handleRequest(req, res, req.body);
  };

/** GET and DELETE /mcp: the server's stream of an open streamable HTTP session, or its close. */
const streamable =
  (doors: McpDoors): RequestHandler =>
  async (req, res) => {
    acceptAnything(req);
    const id = req.get('mcp-session-id');
    if (!id) return jsonRpcError(req, res, 400, MCP_INVALID_REQUEST, 'Invalid request: Mcp-Session-Id header is required');
    const c = ownConnection(doors, req, id);
    if (!c || !(c.transport instanceof StreamableHTTPServerTransport)) return sessionNotFound(req, res);
    // DELETE closes the transport, whose onclose frees the slot.
    await c.transport.handleRequest(req, res);
  };

/** GET /mcp/sse: opens an MCP session on the SSE transport in a free slot of the user. */
const openSse =
  (doors: McpDoors): RequestHandler =>
  async (req, res) => {
    const { connections } = doors;
    const user = currentUser(req);
    const slot = connections.reserve(user._id);
    if (!slot) return atCap(doors, req, res);
    const transport = new SSEServerTransport('/mcp/messages', res);
    const server = createMcpServer(doors.deps, user);
    // Registered before the stream opens: the client may post as soon as it reads the endpoint.
    connections.add(transport.sessionId, slot, { userId: user._id, server, transport });
    res.on('close', () => {
      // The client left, or the session was closed (idle, shutdown): the stream ended.
      if (connections.remove(transport.sessionId)) closeServer(doors, server);
      slot.release();
    });
    try {
      await server.connect(transport);
    } catch (err) {
      if (connections.remove(transport.sessionId)) closeServer(doors, server);
      throw err;
    }
  };

/** POST /mcp/messages: a message of an open SSE session. */
const postSseMessage =
  (doors: McpDoors): RequestHandler =>
  async (req, res) => {
    const id = typeof req.query.sessionId === 'string' && req.query.sessionId ? req.query.sessionId : undefined;
    if (!id) return jsonRpcError(req, res, 400, MCP_INVALID_REQUEST, 'Invalid request: the sessionId query parameter is required');
    const c = ownConnection(doors, req, id);
    if (!c || !(c.transport instanceof SSEServerTransport)) return sessionNotFound(req, res);
    // Checked here, so a body the transport cannot take is a JSON-RPC error like the others (the SDK answers it in plain text).
    if (!mcpMessageSchema.safeParse(req.body).success) return jsonRpcError(req, res, 400, MCP_INVALID_REQUEST, 'Invalid request: the body must be one JSON-RPC message (Content-Type: application/json)');
    await c.transport.handlePostMessage(req, res, req.body);
  };

/**
 * The MCP server: streamable HTTP at /mcp and the older SSE transport (GET /mcp/sse +
 * POST /mcp/messages). Every request carries the bearer API key; an MCP session belongs
 * to the user who opened it, and another user's MCP session id is unknown (404, -32603).
 *
 * Sessions live in this process's memory, so they are bounded: at most
 * MCP_MAX_SESSIONS_PER_USER open per user (the next initialize, or SSE stream, is refused
 * with 429 and -32600), and one without a request for MCP_SESSION_IDLE_MS (and no call of
 * its still running) is closed, which frees its slot. DELETE /mcp closes one at once.
 */
export function mcpRoutes(deps: McpDeps & { auth: RequestHandler }): McpRouter {
  const router = Router() as McpRouter;
  const logger = deps.logger.child({ component: 'mcp' });
  const connections = new McpConnections({ maxPerUser: deps.config.MCP_MAX_SESSIONS_PER_USER, idleMs: deps.config.MCP_SESSION_IDLE_MS, logger });
  router.close = () => connections.closeAll();
  const doors: McpDoors = { deps, connections, logger };
  router.post('/mcp', deps.auth, postStreamable(doors));
  router.get('/mcp', deps.auth, streamable(doors));
  router.delete('/mcp', deps.auth, streamable(doors));
  router.get('/mcp/sse', deps.auth, openSse(doors));
  router.post('/mcp/messages', deps.auth, postSseMessage(doors));
  return router;
}
