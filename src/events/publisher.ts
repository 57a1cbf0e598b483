import { Emitter } from '@socket.io/redis-emitter';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger';
import type { EventsRepository } from '../store/events.repository';
import { sessionRoom, type ConnectionEvent, type SessionMessage, type TimelineEntry } from '../contracts/events';

/**
 * Publishes a session's events: stored in the timeline with the next seq, then sent
 * through Redis to every API instance holding sockets of that session.
 */
export class EventPublisher {
  private readonly emitter: Emitter;
  /** Per-session chain so one process's events keep their order on the wire. */
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    redis: Redis,
    private readonly events: EventsRepository,
    private readonly logger: Logger,
  ) {
    this.emitter = new Emitter(redis);
  }

  async message(sessionId: string, payload: SessionMessage): Promise<TimelineEntry> {
    return this.publish(sessionId, 'message', payload);
  }

  async connection(sessionId: string, e: ConnectionEvent): Promise<TimelineEntry> {
    const { event, ...payload } = e;
    const entry = await this.publish(sessionId, event, payload);
    if (event === 'end_session') this.emitter.in(sessionRoom(sessionId)).disconnectSockets();
    return entry;
  }

  private publish(sessionId: string, event: TimelineEntry['event'], payload: object): Promise<TimelineEntry> {
    // The event's time is when it happened, not when its turn in the chain came.
    const timestamp = Date.now();
    const prev = this.chains.get(sessionId) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(() => this.publishNow(sessionId, event, payload, timestamp));
    this.chains.set(sessionId, next);
    void next.finally(() => {
      if (this.chains.get(sessionId) === next) this.chains.delete(sessionId);
    }).catch(() => undefined);
    return next;
  }

  private async publishNow(sessionId: string, event: TimelineEntry['event'], payload: object, timestamp: number): Promise<TimelineEntry> {
    const entry = await this.events.appendNext({ event, payload, sessionId, timestamp } as Omit<TimelineEntry, 'seq'>);
    const { seq } = entry;
    this.emitter.to(sessionRoom(sessionId)).emit(event, wireEvent(entry));
    this.logger.debug({ sessionId, seq, event, type: (payload as { type?: string }).type }, 'event published');
    return entry;
  }
}

/** What a socket receives: the payload with its seq and timestamp. */
export function wireEvent(entry: TimelineEntry): Record<string, unknown> {
  return { ...entry.payload, sessionId: entry.sessionId, seq: entry.seq, timestamp: entry.timestamp };
}
