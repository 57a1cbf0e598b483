import type { Redis } from 'ioredis';
import type { CDPSession, Page } from 'playwright-core';
import type { Logger } from '../logger';
import type { BrowserPool, BrowserSession } from './pool';

/*
 * The worker half of the live view. API instances that have viewers of a session publish
 * a demand on SCREENCAST_DEMAND_CHANNEL every few seconds; the worker holding that session
 * answers with JPEG frames on frameChannel(sessionId). Nothing is captured without a
 * demand, so an unwatched session costs no CPU. A still page sends no frames, so a demand
 * marked `first` (from a new subscriber) is answered with the current picture at once.
 * This module only imports Playwright types, so the API side can import the channel
 * names without loading a browser.
 */

export const SCREENCAST_DEMAND_CHANNEL = 'bas:screencast:demand';
export const frameChannel = (sessionId: string): string => `bas:frames:${sessionId}`;

export interface ScreencastDemand {
  sessionId: string;
  /** The sender has just subscribed to the session's frames. */
  first?: boolean;
}

export interface ScreencastOptions {
  /** How long one demand keeps the screencast running; API instances repeat it well within. */
  leaseMs: number;
  /** How often leases, closed sessions and tab switches are checked. */
  checkMs: number;
  /** Frames are acknowledged no sooner than this after the previous one: Chromium waits for the ack, so this caps the frame rate. */
  minFrameIntervalMs: number;
  quality: number;
}

// About 15 frames a second: smooth enough to follow an agent, and Chromium's JPEG encoding
// of a busy page stays well under a core.
const DEFAULTS: ScreencastOptions = { leaseMs: 30_000, checkMs: 500, minFrameIntervalMs: 66, quality: 60 };

interface Cast {
  sessionId: string;
  session: BrowserSession;
  leaseUntil: number;
  /** The page being (or about to be) screencast; compared with session.page to follow tab switches. */
  target?: Page;
  cdp?: CDPSession;
  /** The newest picture published, for subscribers that arrive while the page is still. */
  lastFrame?: Buffer;
  /** Start, move and stop of one cast run one after another. */
  chain: Promise<void>;
  ended: boolean;
}

export interface Screencaster {
  stop(): Promise<void>;
}

export function startScreencaster(deps: { pool: BrowserPool; redis: Redis; logger: Logger }, options: Partial<ScreencastOptions> = {}): Screencaster {
  const opts = { ...DEFAULTS, ...options };
  const logger = deps.logger.child({ component: 'screencast' });
  // A subscribed connection can do nothing else, and frames are bulky: both get their own.
  const sub = deps.redis.duplicate();
  const pub = deps.redis.duplicate();
  const casts = new LiveCasts(deps.pool, sub, pub, opts, logger);
  casts.listen();
  return { stop: () => casts.stop() };
}

/** The casts of this worker's sessions: started by demands, moved along tab switches, ended when their lease runs out. */
class LiveCasts {
  private readonly casts = new Map<string, Cast>();
  private stopped = false;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly pool: BrowserPool,
    private readonly sub: Redis,
    private readonly pub: Redis,
    private readonly opts: ScreencastOptions,
    private readonly logger: Logger,
  ) {}

  /** Listens for demands and checks the casts every `checkMs`. */
  listen(): void {
    const { sub, logger } = this;
    sub.on('message', (_channel: string, raw: string) => {
      try {
        const { sessionId, first } = JSON.parse(raw) as { sessionId?: unknown; first?: unknown };
        if (typeof sessionId === 'string') this.onDemand({ sessionId, first: first === true });
      } catch {
        logger.debug({ raw: raw.slice(0, 200) }, 'malformed screencast demand');
      }
    });
    sub.subscribe(SCREENCAST_DEMAND_CHANNEL).catch((err) => logger.error({ err }, 'screencast demand subscription failed'));
    this.timer = setInterval(() => this.check(), this.opts.checkMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    const all = [...this.casts.values()];
    all.forEach((cast) => this.end(cast));
    await Promise.all(all.map((c) => c.chain));
    const { sub, pub } = this;
    await Promise.all([sub.quit().catch(() => sub.disconnect()), pub.quit().catch(() => pub.disconnect())]);
  }

  private onDemand({ sessionId, first }: ScreencastDemand): void {
    const session = this.pool.get(sessionId);
    if (!session || session.crashed || this.stopped) return;
    const leaseUntil = Date.now() + this.opts.leaseMs;
    const existing = this.casts.get(sessionId);
    if (existing && existing.session === session) {
      existing.leaseUntil = leaseUntil;
      // Without a picture yet, the attach under way publishes its screenshot.
      if (first && existing.lastFrame) this.pub.publish(frameChannel(sessionId), existing.lastFrame).catch(() => undefined);
      return;
    }
    if (existing) this.end(existing);
    const cast: Cast = { sessionId, session, leaseUntil, chain: Promise.resolve(), ended: false };
    this.casts.set(sessionId, cast);
    this.follow(cast);
  }

  private check(): void {
    const now = Date.now();
    for (const cast of this.casts.values()) {
      if (now > cast.leaseUntil || this.pool.get(cast.sessionId) !== cast.session || cast.session.crashed) this.end(cast);
      else this.follow(cast);
    }
  }

  private enqueue(cast: Cast, step: () => Promise<void>): void {
    cast.chain = cast.chain.then(step).catch((err) => this.logger.debug({ sessionId: cast.sessionId, err: String(err) }, 'screencast step failed'));
  }

  private end(cast: Cast): void {
    if (cast.ended) return;
    cast.ended = true;
    if (this.casts.get(cast.sessionId) === cast) this.casts.delete(cast.sessionId);
    this.enqueue(cast, () => detach(cast));
    this.logger.debug({ sessionId: cast.sessionId }, 'screencast stopped');
  }

  /** Moves the cast to the session's current page when the agent has switched tabs. */
  private follow(cast: Cast): void {
    const page = cast.session.page;
    if (cast.target === page) return;
    cast.target = page;
    this.enqueue(cast, () =>
      this.attach(cast, page).catch((err) => {
        // Tried again at the next check, unless the agent has moved on meanwhile.
        if (cast.target === page) cast.target = undefined;
        throw err;
      }),
    );
  }

  private async attach(cast: Cast, page: Page): Promise<void> {
    await detach(cast);
    if (cast.ended || page.isClosed()) return;
    const log = this.logger.child({ sessionId: cast.sessionId });
    const channel = frameChannel(cast.sessionId);
    // A still page produces no screencast frames: one screenshot makes sure viewers see it.
    const shot = await page.screenshot({ type: 'jpeg', quality: this.opts.quality, timeout: 5000 }).catch(() => undefined);
    if (cast.ended || cast.target !== page) return;
    if (shot) {
      cast.lastFrame = shot;
      await this.pub.publish(channel, shot);
    }
    const cdp = await cast.session.context.newCDPSession(page);
    if (cast.ended || cast.target !== page) {
      await cdp.detach().catch(() => undefined);
      return;
    }
    cast.cdp = cdp;
    this.forwardFrames(cast, cdp, channel, log);
    await cdp.send('Page.startScreencast', { format: 'jpeg', quality: this.opts.quality, maxWidth: 1024, maxHeight: 600, everyNthFrame: 1 });
    log.debug({ url: page.url() }, 'screencast started');
  }

  /** Publishes each frame of the cast's CDP session, acknowledging it no sooner than `minFrameIntervalMs` after the previous one. */
  private forwardFrames(cast: Cast, cdp: CDPSession, channel: string, log: Logger): void {
    let lastFrameAt = 0;
    cdp.on('Page.screencastFrame', ({ data, sessionId: frameId }) => {
      if (cast.cdp !== cdp) return;
      const frame = Buffer.from(data, 'base64');
      cast.lastFrame = frame;
      this.pub.publish(channel, frame).catch((err) => log.debug({ err: String(err) }, 'frame publish failed'));
      const now = Date.now();
      const wait = Math.max(0, lastFrameAt + this.opts.minFrameIntervalMs - now);
      lastFrameAt = now + wait;
      setTimeout(() => {
        if (cast.cdp === cdp) cdp.send('Page.screencastFrameAck', { sessionId: frameId }).catch(() => undefined);
      }, wait);
    });
  }
}

/** Stops the cast's screencast and lets go of its CDP session, if it has one. */
async function detach(cast: Cast): Promise<void> {
  const cdp = cast.cdp;
  cast.cdp = undefined;
  if (!cdp) return;
  await cdp.send('Page.stopScreencast').catch(() => undefined);
  await cdp.detach().catch(() => undefined);
}
