import type http from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import type { Redis } from 'ioredis';
import { Server, type Socket } from 'socket.io';
import { isServiceError, ServiceError } from '../../errors';
import { wireEvent } from '../../events/publisher';
import { sessionRoom } from '../../events/types';
import type { Logger } from '../../logger';
import { LIVE_SESSION_STATUSES } from '../../store/sessions.repository';
import type { Store } from '../../store/store';
import type { MessageHandler } from '../messages.handler';
import { Watchers, WATCH_REFRESH_MS } from '../../environments/reach-out';

interface SocketData {
  sessionId: string;
  userId: string;
}

type Ack = (answer: Record<string, unknown>) => void;

/**
 * The live channel: a socket joins its session's room (on whichever API instance holds
 * it; the Redis adapter fans events out), gets what it missed since `auth.lastSeq`, then
 * live events; it may send the same messages as send-message.
 */
export function attachSocketServer(deps: { server: http.Server; redis: Redis; store: Store; messages: MessageHandler; logger: Logger }): Server {
  const { store, messages } = deps;
  const logger = deps.logger.child({ component: 'socket' });
  const pub = deps.redis.duplicate();
  const sub = deps.redis.duplicate();
  const io = new Server<any, any, any, SocketData>(deps.server, { cors: { origin: true }, adapter: createAdapter(pub, sub), serveClient: true });
  // Who watches each session, seen by every API instance and the workers (reach-out).
  const watchers = new Watchers(deps.redis);
  const seen = (socket: Socket<any, any, any, SocketData>) => watchers.socketSeen(socket.data.sessionId, socket.id).catch((err) => logger.warn({ err }, 'watcher presence not recorded'));
  const refresh = setInterval(() => {
    for (const socket of io.of('/').sockets.values()) if (socket.data?.sessionId) void seen(socket);
  }, WATCH_REFRESH_MS);
  refresh.unref();

  io.use(async (socket, next) => {
    const { sessionId } = (socket.handshake.auth ?? {}) as { sessionId?: unknown };
    if (typeof sessionId !== 'string' || !sessionId) return next(new Error('auth.sessionId is required'));
    try {
      const session = await store.sessions.get(sessionId);
      if (!session) return next(new Error('Session not found'));
      if (!LIVE_SESSION_STATUSES.includes(session.status)) return next(new Error(`Session has ended (${session.status})`));
      socket.data = { sessionId, userId: session.userId };
      next();
    } catch (err) {
      logger.error({ err }, 'socket handshake failed');
      next(new Error('Authentication error'));
    }
  });

  io.on('connection', (socket: Socket<any, any, any, SocketData>) => {
    const { sessionId } = socket.data;
    const log = logger.child({ sessionId, socketId: socket.id });
    void seen(socket);
    socket.on('disconnect', () => {
      watchers.socketLeft(sessionId, socket.id).catch((err) => log.warn({ err }, 'watcher presence not cleared'));
    });
    void (async () => {
      const lastSeq = Number((socket.handshake.auth as { lastSeq?: unknown }).lastSeq);
      let sent = Number.isFinite(lastSeq) && lastSeq >= 0 ? lastSeq : Number.NaN;
      if (!Number.isNaN(sent)) {
        for (const e of await store.events.after(sessionId, sent)) {
          socket.emit(e.event, wireEvent(e));
          sent = e.seq;
        }
      }
      await socket.join(sessionRoom(sessionId));
      // Events published between the replay and the join are sent once more from the timeline.
      if (!Number.isNaN(sent)) for (const e of await store.events.after(sessionId, sent)) socket.emit(e.event, wireEvent(e));
      log.debug('socket joined');
    })().catch((err) => log.warn({ err }, 'replay failed'));

    socket.on('message', async (body: unknown, ack?: Ack) => {
      let answer: Record<string, unknown>;
      try {
        const user = await store.users.get(socket.data.userId);
        if (!user || user.status !== 'active') throw new ServiceError('ACCOUNT_DEACTIVATED', 'Account is deactivated', 403);
        answer = (await messages.handle(user, sessionId, body)).body;
      } catch (err) {
        const e = isServiceError(err) ? err : new ServiceError('INTERNAL_ERROR', 'Internal server error', 500);
        if (!isServiceError(err)) log.error({ err }, 'socket message failed');
        answer = e.toBody();
        if (typeof ack !== 'function') socket.emit('message', { type: 'error', error: e.message, code: e.code, ...(e.details ? { details: e.details } : {}) });
      }
      if (typeof ack === 'function') ack(answer);
    });
  });

  return io;
}

/** Sockets watching each session, counted across every API instance. */
export async function socketCounts(io: Server, sessionIds: string[]): Promise<{ sessionId: string; sockets: number }[]> {
  return Promise.all(sessionIds.map(async (sessionId) => ({ sessionId, sockets: (await io.in(sessionRoom(sessionId)).fetchSockets()).length })));
}
