import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppDeps, type LiveChannel } from './app';
import { attachSocketServer } from './socket/socket.server';
import { apiMetrics } from '../metrics/api-metrics';

export interface RunningApi {
  server: http.Server;
  port: number;
  /** Stops accepting connections, lets in-flight requests finish, then closes. */
  shutdown(): Promise<void>;
}

export async function startApiServer(deps: AppDeps): Promise<RunningApi> {
  const live: LiveChannel = {};
  const { app, messages, liveRoutes, mcp } = createApp(deps, live);
  const server = http.createServer(app);
  live.io = attachSocketServer({ server, redis: deps.redis, store: deps.store, messages, logger: deps.logger, limits: deps.config, trustProxy: app.get('trust proxy fn') });
  apiMetrics.watch({ liveSessions: () => deps.store.sessions.countAllLive(), sockets: () => live.io?.engine.clientsCount ?? 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.config.PORT, deps.config.HOST, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  deps.logger.child({ component: 'api' }).info({ port, baseUrl: deps.config.PUBLIC_BASE_URL }, 'API listening');
  return {
    server,
    port,
    shutdown: () =>
      new Promise<void>((resolve) => {
        void liveRoutes.close();
        // Open MCP sessions end their streams (and idle timers) instead of holding the server open.
        void mcp.close();
        void live.io?.close();
        server.close(() => resolve());
        server.closeIdleConnections();
        // Requests still waiting inline for a task get their answer by polling instead.
        setTimeout(() => server.closeAllConnections(), deps.config.SHUTDOWN_GRACE_MS).unref();
      }),
  };
}
