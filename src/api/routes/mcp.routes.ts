import { randomUUID } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { currentUser } from '../middleware/auth';
import { createMcpServer, type McpDeps } from '../mcp/mcp.server';

interface Connection {
  userId: string;
  server: McpServer;
  transport: StreamableHTTPServerTransport | SSEServerTransport;
}

const jsonRpcError = (res: Response, status: number, code: number, message: string) => {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
};

/**
 * The MCP server: streamable HTTP at /mcp and the older SSE transport (GET /mcp/sse +
 * POST /mcp/messages). Every request carries the bearer API key; an MCP session belongs
 * to the user who opened it, and another user's MCP session id is unknown (404).
 */
export function mcpRoutes(deps: McpDeps & { auth: RequestHandler }): Router {
  const router = Router();
  const connections = new Map<string, Connection>();
  const logger = deps.logger.child({ component: 'mcp' });

  const ownConnection = (req: Request, id: string | undefined): Connection | undefined => {
    const c = id ? connections.get(id) : undefined;
    return c && c.userId === currentUser(req)._id ? c : undefined;
  };

  router.post('/mcp', deps.auth, async (req, res) => {
    const id = req.get('mcp-session-id');
    const existing = ownConnection(req, id);
    if (existing && existing.transport instanceof StreamableHTTPServerTransport) {
      await existing.transport.handleRequest(req, res, req.body);
      return;
    }
    if (id) return jsonRpcError(res, 404, -32001, 'MCP session not found');
    if (!isInitializeRequest(req.body)) return jsonRpcError(res, 400, -32600, 'Invalid request: start with initialize (no Mcp-Session-Id yet)');
    const user = currentUser(req);
    const server = createMcpServer(deps, user);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        connections.set(sid, { userId: user._id, server, transport });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) connections.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });

  const streamable: RequestHandler = async (req, res) => {
    const c = ownConnection(req, req.get('mcp-session-id'));
    if (!c || !(c.transport instanceof StreamableHTTPServerTransport)) return jsonRpcError(res, req.get('mcp-session-id') ? 404 : 400, -32001, 'MCP session not found');
    await c.transport.handleRequest(req, res);
  };
  router.get('/mcp', deps.auth, streamable);
  router.delete('/mcp', deps.auth, streamable);

  router.get('/mcp/sse', deps.auth, async (req, res) => {
    const user = currentUser(req);
    const transport = new SSEServerTransport('/mcp/messages', res);
    const server = createMcpServer(deps, user);
    connections.set(transport.sessionId, { userId: user._id, server, transport });
    res.on('close', () => {
      connections.delete(transport.sessionId);
      void server.close().catch((err: unknown) => logger.debug({ err }, 'closing an MCP connection failed'));
    });
    await server.connect(transport);
  });

  router.post('/mcp/messages', deps.auth, async (req, res) => {
    const c = ownConnection(req, typeof req.query.sessionId === 'string' ? req.query.sessionId : undefined);
    if (!c || !(c.transport instanceof SSEServerTransport)) return jsonRpcError(res, 404, -32001, 'MCP session not found');
    await c.transport.handlePostMessage(req, res, req.body);
  });

  return router;
}
