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
import { LIVE_SESSION_STATUSES, type SessionRecord } from '../../store/sessions.repository';
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
type LiveSocket = Socket<any, any, any, SocketData>;

export interface SocketDeps {
  server: http.Server;
  redis: Redis;
  store: Store;
  messages: MessageHandler;
  logger: Logger;
  limits: SocketLimits;
  /** Express's compiled "trust proxy": the client address is the one X-Forwarded-For gives through trusted proxies. */
  trustProxy: Parameters<typeof proxyaddr>[1];
}

/** What the live channel's parts share: its dependencies, its logger, the connection slots and the session watchers. */
interface SocketHub extends SocketDeps {
  slots: RedisSlots;
  /** Who watches each session, seen by every API instance and the workers (reach-out). */
  watchers: Watchers;
}

function releaseSlots(hub: SocketHub, data: Partial<SocketData> | undefined, id: string): void {
  for (const key of data?.slots ?? []) hub.slots.release(key, id).catch((err) => hub.logger.warn({ err }, 'socket slot not released'));
}

const seen = (hub: SocketHub, socket: LiveSocket) => hub.watchers.socketSeen(socket.data.sessionId, socket.id).catch((err) => hub.logger.warn({ err }, 'watcher presence not recorded'));

/** A replay asked from an address beyond SOCKET_REPLAYS_PER_MINUTE: the refusal, or null. */
async function replayRefusal(hub: SocketHub, sessionId: string, address: string, socketId: string): Promise<Error | null> {
  const { limits } = hub;
  const hit = await windowHit(hub.redis, `bas:replays:${sessionId}:${address}`, limits.SOCKET_REPLAYS_PER_MINUTE, 60_000, socketId);
  if (hit.ok) return null;
  const retryAfter = Math.ceil(hit.retryAfterMs / 1000);
  return refused(`Too many event replays: at most ${limits.SOCKET_REPLAYS_PER_MINUTE} connections with auth.lastSeq per minute; try again in ${retryAfter} s`, { code: 'TOO_MANY_REPLAYS', limit: limits.SOCKET_REPLAYS_PER_MINUTE, retryAfter });
}

/** Takes a connection slot of the session and one of the address (added to `taken`); the refusal when one is full, or null. */
async function takeSlots(hub: SocketHub, sessionId: string, address: string, socketId: string, taken: string[]): Promise<Error | null> {
  const { limits, slots } = hub;
  const bySession = await slots.acquire(sessionKey(sessionId), socketId, limits.SOCKET_MAX_PER_SESSION);
  if (!bySession.ok) return refused(`Too many connections to this session: at most ${limits.SOCKET_MAX_PER_SESSION} at once`, { code: 'TOO_MANY_CONNECTIONS', scope: 'session', limit: limits.SOCKET_MAX_PER_SESSION });
  taken.push(sessionKey(sessionId));
  const byAddress = await slots.acquire(addressKey(address), socketId, limits.SOCKET_MAX_PER_ADDRESS);
  if (!byAddress.ok) {
    releaseSlots(hub, { slots: taken }, socketId);
    return refused(`Too many connections from this address: at most ${limits.SOCKET_MAX_PER_ADDRESS} at once`, { code: 'TOO_MANY_CONNECTIONS', scope: 'address', limit: limits.SOCKET_MAX_PER_ADDRESS });
  }
  taken.push(addressKey(address));
  return null;
}

/** An ended session's last events stay readable, for as long as the timeline is kept, to a client asking with auth.lastSeq. */
const endedOutOfReach = (session: SessionRecord, lastSeq: unknown): boolean => !replayAsked(lastSeq) || (session.endedAt ?? session.updatedAt).getTime() + TIMELINE_KEPT_AFTER_END_MS < Date.now();

/** The handshake: a known session (live, or ended with a replay asked), within the replay rate and the connection caps. */
const handshake = (hub: SocketHub) => async (socket: LiveSocket, next: (err?: Error) => void) => {
  const { sessionId, lastSeq } = (socket.handshake.auth ?? {}) as { sessionId?: unknown; lastSeq?: unknown };
  if (typeof sessionId !== 'string' || !sessionId) return next(new Error('auth.sessionId is required'));
  const taken: string[] = [];
  try {
    const session = await hub.store.sessions.get(sessionId);
    if (!session) return next(new Error('Session not found'));
    const ended = !LIVE_SESSION_STATUSES.includes(session.status);
    if (ended && endedOutOfReach(session, lastSeq)) return next(new Error(`Session has ended (${session.status})`));
    const address = proxyaddr(socket.request, hub.trustProxy);
    const refusal = (replayAsked(lastSeq) ? await replayRefusal(hub, sessionId, address, socket.id) : null) ?? (await takeSlots(hub, sessionId, address, socket.id, taken));
    if (refusal) return next(refusal);
    socket.data = { sessionId, userId: session.userId, address, slots: taken, ...(ended ? { endReason: session.endReason ?? session.status, endedAt: (session.endedAt ?? session.updatedAt).getTime() } : {}) };
    next();
  } catch (err) {
    releaseSlots(hub, { slots: taken }, socket.id);
    hub.logger.error({ err }, 'socket handshake failed');
    next(new Error('Authentication error'));
  }
};

/**
 * The missed events of one connection, oldest first, from the seq after `sent`: at most
 * SOCKET_REPLAY_MAX_EVENTS in all; a client that missed more is told where to go on from.
 */
class Replay {
  truncated = false;
  endReplayed = false;
  private budget: number;

  constructor(
    private readonly store: Store,
    private readonly socket: LiveSocket,
    public sent: number,
    max: number,
  ) {
    this.budget = max;
  }

  async run(): Promise<void> {
    const events = await this.store.events.after(this.socket.data.sessionId, this.sent, this.budget + 1);
    this.truncated = events.length > this.budget;
    for (const e of events.slice(0, this.budget)) {
      if (e.event === 'end_session') this.endReplayed = true;
      this.socket.emit(e.event, wireEvent(e));
      this.sent = e.seq;
      this.budget -= 1;
    }
  }
}

/** Sends what the client missed, then joins it to the session's room; an ended session's socket gets its end and is let go. */
async function replayThenJoin(hub: SocketHub, socket: LiveSocket, log: Logger): Promise<void> {
  const { sessionId, endReason, endedAt } = socket.data;
  const { lastSeq } = socket.handshake.auth as { lastSeq?: unknown };
  const max = hub.limits.SOCKET_REPLAY_MAX_EVENTS;
  const replay = new Replay(hub.store, socket, replayAsked(lastSeq) ? Number(lastSeq) : Number.NaN, max);
  const asked = !Number.isNaN(replay.sent);
  if (asked) await replay.run();
  if (endReason !== undefined) {
    // An ended session: its timeline is all there is; it ends with end_session.
    if (replay.truncated) socket.emit('error', replayTruncated(replay.sent, max));
    else if (!replay.endReplayed) socket.emit('end_session', await storedEnd(hub.store, sessionId, endReason, endedAt ?? Date.now()));
    socket.disconnect(true);
    return;
  }
  await socket.join(sessionRoom(sessionId));
  // Events published between the replay and the join are sent once more from the timeline.
  if (asked && !replay.truncated) await replay.run();
  if (replay.truncated) socket.emit('error', replayTruncated(replay.sent, max));
  log.debug('socket joined');
}

/** A message sent on the channel, handled like send-message: answered by the acknowledgement, or else a failure as the `error` event. */
const answerMessage = (hub: SocketHub, socket: LiveSocket, log: Logger) => async (body: unknown, ack?: Ack) => {
  let answer: Record<string, unknown>;
  try {
    const user = await hub.store.users.get(socket.data.userId);
    if (!user || user.status !== 'active') throw new ServiceError('ACCOUNT_DEACTIVATED', 'Account is deactivated');
    answer = (await hub.messages.handle(user, socket.data.sessionId, body, 'socket')).body;
  } catch (err) {
    const e = isServiceError(err) ? err : new ServiceError('INTERNAL_ERROR', 'Internal server error');
    if (!isServiceError(err)) log.error({ err }, 'socket message failed');
    answer = e.toBody();
    // Without an acknowledgement the service error comes as the channel's `error` event.
    if (typeof ack !== 'function') socket.emit('error', { ...answer, timestamp: Date.now() });
  }
  if (typeof ack === 'function') ack(answer);
};

function onConnection(hub: SocketHub, socket: LiveSocket): void {
  const { sessionId } = socket.data;
  const log = hub.logger.child({ sessionId, socketId: socket.id });
  void seen(hub, socket);
  socket.on('disconnect', () => {
    releaseSlots(hub, socket.data, socket.id);
    hub.watchers.socketLeft(sessionId, socket.id).catch((err) => log.warn({ err }, 'watcher presence not cleared'));
  });
  replayThenJoin(hub, socket, log).catch((err) => log.warn({ err }, 'replay failed'));
  socket.on('message', answerMessage(hub, socket, log));
}

/**
 * The live channel: a socket joins its session's room (on whichever API instance holds
 * it; the Redis adapter fans events out), gets what it missed since `auth.lastSeq`, then
 * live events; it may send the same messages as send-message.
 */
export function attachSocketServer(deps: SocketDeps): Server {
  const hub: SocketHub = { ...deps, logger: deps.logger.child({ component: 'socket' }), slots: new RedisSlots(deps.redis), watchers: new Watchers(deps.redis) };
  const pub = deps.redis.duplicate();
  const sub = deps.redis.duplicate();
  const io = new Server<any, any, any, SocketData>(deps.server, { cors: { origin: true }, adapter: createAdapter(pub, sub), serveClient: true });
  const refresh = setInterval(() => {
    for (const socket of io.of('/').sockets.values()) if (socket.data?.sessionId) void seen(hub, socket);
  }, WATCH_REFRESH_MS);
  refresh.unref();
  io.use(handshake(hub));
  io.on('connection', (socket: LiveSocket) => onConnection(hub, socket));
  const close = io.close.bind(io);
  io.close = (fn) => {
    void hub.slots.close();
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
