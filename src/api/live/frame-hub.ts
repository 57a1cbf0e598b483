import type { Redis } from 'ioredis';
import type { Logger } from '../../logger';
import { frameChannel, SCREENCAST_DEMAND_CHANNEL, type ScreencastDemand } from '../../browser/screencast';

/** Something on this API instance that shows a session's screen: an MJPEG response, a WHEP feed. */
export interface FrameConsumer {
  frame(jpeg: Buffer): void;
  /** The session ended; the consumer is already removed. */
  end(): void;
}

interface Watched {
  consumers: Set<FrameConsumer>;
  latest?: Buffer;
  demandTimer: NodeJS.Timeout;
}

export interface FrameHubOptions {
  /** Demands are repeated well within the worker's lease (30 s). */
  demandIntervalMs: number;
  /** How often watched sessions are checked for having ended. */
  liveCheckMs: number;
}

/**
 * Frames of the sessions watched on this API instance: one Redis subscription per session
 * however many viewers it has, a demand that keeps the worker's screencast going while
 * anyone watches, and the latest frame so a new viewer sees something at once.
 */
export class FrameHub {
  private readonly sub: Redis;
  private readonly watched = new Map<string, Watched>();
  private readonly liveTimer: NodeJS.Timeout;
  private readonly opts: FrameHubOptions;
  private closed = false;
  private checking = false;

  constructor(
    private readonly deps: { redis: Redis; logger: Logger; isLive: (sessionId: string) => Promise<boolean> },
    options: Partial<FrameHubOptions> = {},
  ) {
    this.opts = { demandIntervalMs: 10_000, liveCheckMs: 2000, ...options };
    this.sub = deps.redis.duplicate();
    this.sub.on('messageBuffer', (channel: Buffer, message: Buffer) => this.onFrame(channel.toString(), message));
    this.liveTimer = setInterval(() => void this.checkLive(), this.opts.liveCheckMs);
    this.liveTimer.unref();
  }

  /** Adds a consumer; the returned function removes it (idempotent). */
  add(sessionId: string, consumer: FrameConsumer): () => void {
    if (this.closed) throw new Error('frame hub closed');
    let w = this.watched.get(sessionId);
    if (!w) {
      const demandTimer = setInterval(() => this.demand(sessionId), this.opts.demandIntervalMs);
      demandTimer.unref();
      const created: Watched = { consumers: new Set(), demandTimer };
      this.watched.set(sessionId, created);
      // Asked only once subscribed, so the picture the worker answers with is not missed.
      void this.sub
        .subscribe(frameChannel(sessionId))
        .catch((err) => this.deps.logger.warn({ err, sessionId }, 'frame subscription failed'))
        .then(() => {
          if (this.watched.get(sessionId) === created) this.demand(sessionId, true);
        });
      w = created;
    }
    w.consumers.add(consumer);
    return () => this.remove(sessionId, consumer);
  }

  latest(sessionId: string): Buffer | undefined {
    return this.watched.get(sessionId)?.latest;
  }

  consumers(sessionId: string): number {
    return this.watched.get(sessionId)?.consumers.size ?? 0;
  }

  /** Sessions with a subscription on this instance. */
  sessions(): string[] {
    return [...this.watched.keys()];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.liveTimer);
    for (const [sessionId, w] of this.watched) this.drop(sessionId, w, true);
    await this.sub.quit().catch(() => this.sub.disconnect());
  }

  private remove(sessionId: string, consumer: FrameConsumer): void {
    const w = this.watched.get(sessionId);
    if (!w || !w.consumers.delete(consumer)) return;
    if (w.consumers.size === 0) this.drop(sessionId, w, false);
  }

  /** Forgets a session; with `ended` its consumers are told. */
  private drop(sessionId: string, w: Watched, ended: boolean): void {
    if (this.watched.get(sessionId) !== w) return;
    this.watched.delete(sessionId);
    clearInterval(w.demandTimer);
    this.sub.unsubscribe(frameChannel(sessionId)).catch(() => undefined);
    if (!ended) return;
    const consumers = [...w.consumers];
    w.consumers.clear();
    for (const c of consumers) {
      try {
        c.end();
      } catch (err) {
        this.deps.logger.warn({ err, sessionId }, 'frame consumer failed to end');
      }
    }
  }

  private demand(sessionId: string, first = false): void {
    const demand: ScreencastDemand = first ? { sessionId, first } : { sessionId };
    this.deps.redis.publish(SCREENCAST_DEMAND_CHANNEL, JSON.stringify(demand)).catch((err) => this.deps.logger.warn({ err, sessionId }, 'screencast demand failed'));
  }

  private onFrame(channel: string, jpeg: Buffer): void {
    const sessionId = channel.slice(frameChannel('').length);
    const w = this.watched.get(sessionId);
    if (!w) return;
    w.latest = jpeg;
    for (const c of w.consumers) {
      try {
        c.frame(jpeg);
      } catch (err) {
        this.deps.logger.warn({ err, sessionId }, 'frame consumer failed');
      }
    }
  }

  private async checkLive(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      await this.checkEach();
    } finally {
      this.checking = false;
    }
  }

  private async checkEach(): Promise<void> {
    for (const [sessionId, w] of [...this.watched]) {
      let live = true;
      try {
        live = await this.deps.isLive(sessionId);
      } catch (err) {
        this.deps.logger.debug({ err, sessionId }, 'session liveness check failed');
      }
      if (!live) this.drop(sessionId, w, true);
    }
  }
}
