import type http from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import type { Redis } from 'ioredis';
import proxyaddr from 'proxy-addr';
import { Server, type Socket } from 'socket.io';
import type { Config } from '../../config';
import { isServiceError, ServiceError } from '../../contracts/errors';
import { wireEvent } from '../../events/publisher';
import { sessionRoom, TIMELINE_KEPT_AFTER_END_MS } from '../../contracts/events';
import type { Logger } from '../../logger';
import { LIVE_SESSION_STATUSES } from '../../store/sessions.repository';
import type { Store } from '../../store/store';
import { RedisSlots, windowHit } from '../live/redis-slots';
import type { MessageHandler } from '../messages.handler';
import { Watchers, WATCH_REFRESH_MS } from '../../environments/reach-out';

interface SocketData {
  sessionId: string;
  userId: string;
  address: string;
  /** The Redis slots this connection holds (per session, per address), given back on disconnect. */
  slots: string[];
  /** Set when the session had ended at connect: the socket only replays its last events. */
  endReason?: string;
  /** When the session ended (Unix ms), with endReason. */
  endedAt?: number;
}

export type SocketLimits = Pick<Config, 'SOCKET_MAX_PER_SESSION' | 'SOCKET_MAX_PER_ADDRESS' | 'SOCKET_REPLAY_MAX_EVENTS' | 'SOCKET_REPLAYS_PER_MINUTE'>;

/** A refused handshake: the client's connect_error carries the message and `data` ({code, limit, ...}). */
function refused(message: string, data: Record<string, unknown>): Error {
  return Object.assign(new Error(message), { data });
}

const sessionKey = (sessionId: string) => `bas:sockets:session:${sessionId}`;
const addressKey = (address: string) => `bas:sockets:address:${address}`;

type Ack = (answer: Record<string, unknown>) => void;

/**
 * The live channel: a socket joins its session's room (on whichever API instance holds
 * it; the Redis adapter fans events out), gets what it missed since `auth.lastSeq`, then
 * live events; it may send the same messages as send-message.
 */
export function attachSocketServer(deps: {
  server: http.Server;
  redis: Redis;
  store: Store;
  messages: MessageHandler;
  logger: Logger;
  limits: SocketLimits;
  /** Express's compiled "trust proxy": the client address is the one X-Forwarded-For gives through trusted proxies. */
  trustProxy: Parameters<typeof proxyaddr>[1];
}): Server {
  const { store, messages, limits } = deps;
  const logger = deps.logger.child({ component: 'socket' });
  const pub = deps.redis.duplicate();
  const sub = deps.redis.duplicate();
  const io = new Server<any, any, any, SocketData>(deps.server, { cors: { origin: true }, adapter: createAdapter(pub, sub), serveClient: true });
  const slots = new RedisSlots(deps.redis);
  const release = (data: Partial<SocketData> | undefined, id: string) => {
    for (const key of data?.slots ?? []) slots.release(key, id).catch((err) => logger.warn({ err }, 'socket slot not released'));
  };
  // Who watches each session, seen by every API instance and the workers (reach-out).
  const watchers = new Watchers(deps.redis);
  const seen = (socket: Socket<any, any, any, SocketData>) => watchers.socketSeen(socket.data.sessionId, socket.id).catch((err) => logger.warn({ err }, 'watcher presence not recorded'));
  const refresh = setInterval(() => {
    for (const socket of io.of('/').sockets.values()) if (socket.data?.sessionId) void seen(socket);
  }, WATCH_REFRESH_MS);
  refresh.unref();

  io.use(async (socket, next) => {
    const { sessionId, lastSeq } = (socket.handshake.auth ?? {}) as { sessionId?: unknown; lastSeq?: unknown };
    if (typeof sessionId !== 'string' || !sessionId) return next(new Error('auth.sessionId is required'));
    const taken: string[] = [];
    try {
      const session = await store.sessions.get(sessionId);
      if (!session) return next(new Error('Session not found'));
      // An ended session's last events stay readable: a client asking with auth.lastSeq gets
      // what it missed and end_session, for as long as the timeline is kept.
      const ended = !LIVE_SESSION_STATUSES.includes(session.status);
      if (ended && (!replayAsked(lastSeq) || (session.endedAt ?? session.updatedAt).getTime() + TIMELINE_KEPT_AFTER_END_MS < Date.now())) {
        return next(new Error(`Session has ended (${session.status})`));
      }
      const address = proxyaddr(socket.request, deps.trustProxy);
      if (replayAsked(lastSeq)) {
        const hit = await windowHit(deps.redis, `bas:replays:${sessionId}:${address}`, limits.SOCKET_REPLAYS_PER_MINUTE, 60_000, socket.id);
        if (!hit.ok) {
          const retryAfter = Math.ceil(hit.retryAfterMs / 1000);
          return next(refused(`Too many event replays: at most ${limits.SOCKET_REPLAYS_PER_MINUTE} connections with auth.lastSeq per minute; try again in ${retryAfter} s`, { code: 'TOO_MANY_REPLAYS', limit: limits.SOCKET_REPLAYS_PER_MINUTE, retryAfter }));
        }
      }
      const bySession = await slots.acquire(sessionKey(sessionId), socket.id, limits.SOCKET_MAX_PER_SESSION);
      if (!bySession.ok) return next(refused(`Too many connections to this session: at most ${limits.SOCKET_MAX_PER_SESSION} at once`, { code: 'TOO_MANY_CONNECTIONS', scope: 'session', limit: limits.SOCKET_MAX_PER_SESSION }));
      taken.push(sessionKey(sessionId));
      const byAddress = await slots.acquire(addressKey(address), socket.id, limits.SOCKET_MAX_PER_ADDRESS);
      if (!byAddress.ok) {
        release({ slots: taken }, socket.id);
        return next(refused(`Too many connections from this address: at most ${limits.SOCKET_MAX_PER_ADDRESS} at once`, { code: 'TOO_MANY_CONNECTIONS', scope: 'address', limit: limits.SOCKET_MAX_PER_ADDRESS }));
      }
      taken.push(addressKey(address));
      socket.data = { sessionId, userId: session.userId, address, slots: taken, ...(ended ? { endReason: session.endReason ?? session.status, endedAt: (session.endedAt ?? session.updatedAt).getTime() } : {}) };
      next();
    } catch (err) {
      release({ slots: taken }, socket.id);
      logger.error({ err }, 'socket handshake failed');
      next(new Error('Authentication error'));
    }
  });

  io.on('connection', (socket: Socket<any, any, any, SocketData>) => {
    const { sessionId } = socket.data;
    const log = logger.child({ sessionId, socketId: socket.id });
    void seen(socket);
    socket.on('disconnect', () => {
      release(socket.data, socket.id);
      watchers.socketLeft(sessionId, socket.id).catch((err) => log.warn({ err }, 'watcher presence not cleared'));
    });
    void (async () => {
      const { lastSeq } = socket.handshake.auth as { lastSeq?: unknown };
      let sent = replayAsked(lastSeq) ? Number(lastSeq) : Number.NaN;
      // At most SOCKET_REPLAY_MAX_EVENTS events are replayed to one connection, the oldest
      // missed first; a client that missed more is told where to go on from.
      let budget = limits.SOCKET_REPLAY_MAX_EVENTS;
      let truncated = false;
      let endReplayed = false;
      const replay = async () => {
        const events = await store.events.after(sessionId, sent, budget + 1);
        truncated = events.length > budget;
        for (const e of events.slice(0, budget)) {
          if (e.event === 'end_session') endReplayed = true;
          socket.emit(e.event, wireEvent(e));
          sent = e.seq;
          budget -= 1;
        }
      };
      if (!Number.isNaN(sent)) await replay();
      if (socket.data.endReason !== undefined) {
        // An ended session: its timeline is all there is; it ends with end_session.
        if (truncated) socket.emit('error', replayTruncated(sent, limits.SOCKET_REPLAY_MAX_EVENTS));
        else if (!endReplayed) socket.emit('end_session', await storedEnd(store, sessionId, socket.data.endReason, socket.data.endedAt ?? Date.now()));
        socket.disconnect(true);
        return;
      }
      await socket.join(sessionRoom(sessionId));
      // Events published between the replay and the join are sent once more from the timeline.
      if (!Number.isNaN(sent) && !truncated) await replay();
      if (truncated) socket.emit('error', replayTruncated(sent, limits.SOCKET_REPLAY_MAX_EVENTS));
      log.debug('socket joined');
    })().catch((err) => log.warn({ err }, 'replay failed'));

    socket.on('message', async (body: unknown, ack?: Ack) => {
      let answer: Record<string, unknown>;
      try {
        const user = await store.users.get(socket.data.userId);
        if (!user || user.status !== 'active') throw new ServiceError('ACCOUNT_DEACTIVATED', 'Account is deactivated');
        answer = (await messages.handle(user, sessionId, body, 'socket')).body;
      } catch (err) {
        const e = isServiceError(err) ? err : new ServiceError('INTERNAL_ERROR', 'Internal server error');
        if (!isServiceError(err)) log.error({ err }, 'socket message failed');
        answer = e.toBody();
        // Without an acknowledgement the service error comes as the channel's `error` event.
        if (typeof ack !== 'function') socket.emit('error', { ...answer, timestamp: Date.now() });
      }
      if (typeof ack === 'function') ack(answer);
    });
  });

  const close = io.close.bind(io);
  io.close = (fn) => {
    void slots.close();
    return close(fn);
  };
  return io;
}

/**
 * The end_session of an ended session as its timeline holds it (with its seq and timestamp),
 * for a client that reconnects after it; the timeline's last event is the end. When the
 * timeline no longer has it, the end is told at the last seq known, dated by the session's end.
 */
async function storedEnd(store: Store, sessionId: string, reason: string, endedAt: number): Promise<Record<string, unknown>> {
  const latest = await store.events.latestSeq(sessionId);
  const [last] = latest > 0 ? await store.events.after(sessionId, latest - 1, 1) : [];
  if (last?.event === 'end_session') return wireEvent(last);
  return { reason, sessionId, seq: latest, timestamp: endedAt };
}

/** The service error telling a client that its replay stopped short, and where to go on from. */
function replayTruncated(lastSeq: number, max: number): Record<string, unknown> {
  return { ...new ServiceError('REPLAY_TRUNCATED', `Only ${max} missed events are replayed to one connection; connect again with auth.lastSeq ${lastSeq} for the next ones`, { lastSeq, limit: max }).toBody(), timestamp: Date.now() };
}

/** A handshake asks for a replay with a whole auth.lastSeq >= 0. */
function replayAsked(lastSeq: unknown): boolean {
  const n = Number(lastSeq);
  return lastSeq !== undefined && lastSeq !== null && lastSeq !== '' && Number.isFinite(n) && n >= 0;
}

/** Sockets watching each session, counted across every API instance. */
export async function socketCounts(io: Server, sessionIds: string[]): Promise<{ sessionId: string; sockets: number }[]> {
  return Promise.all(sessionIds.map(async (sessionId) => ({ sessionId, sockets: (await io.in(sessionRoom(sessionId)).fetchSockets()).length })));
}
