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
  const casts = new Map<string, Cast>();
  let stopped = false;

  const enqueue = (cast: Cast, step: () => Promise<void>) => {
    cast.chain = cast.chain.then(step).catch((err) => logger.debug({ sessionId: cast.sessionId, err: String(err) }, 'screencast step failed'));
  };

  const detach = async (cast: Cast) => {
    const cdp = cast.cdp;
    cast.cdp = undefined;
    if (!cdp) return;
    await cdp.send('Page.stopScreencast').catch(() => undefined);
    await cdp.detach().catch(() => undefined);
  };

  const attach = async (cast: Cast, page: Page) => {
    await detach(cast);
    if (cast.ended || page.isClosed()) return;
    const log = logger.child({ sessionId: cast.sessionId });
    const channel = frameChannel(cast.sessionId);
    // A still page produces no screencast frames: one screenshot makes sure viewers see it.
    const shot = await page.screenshot({ type: 'jpeg', quality: opts.quality, timeout: 5000 }).catch(() => undefined);
    if (cast.ended || cast.target !== page) return;
    if (shot) {
      cast.lastFrame = shot;
      await pub.publish(channel, shot);
    }
    const cdp = await cast.session.context.newCDPSession(page);
    if (cast.ended || cast.target !== page) {
      await cdp.detach().catch(() => undefined);
      return;
    }
    cast.cdp = cdp;
    let lastFrameAt = 0;
    cdp.on('Page.screencastFrame', ({ data, sessionId: frameId }) => {
      if (cast.cdp !== cdp) return;
      const frame = Buffer.from(data, 'base64');
      cast.lastFrame = frame;
      pub.publish(channel, frame).catch((err) => log.debug({ err: String(err) }, 'frame publish failed'));
      const now = Date.now();
      const wait = Math.max(0, lastFrameAt + opts.minFrameIntervalMs - now);
      lastFrameAt = now + wait;
      setTimeout(() => {
        if (cast.cdp === cdp) cdp.send('Page.screencastFrameAck', { sessionId: frameId }).catch(() => undefined);
      }, wait);
    });
    await cdp.send('Page.startScreencast', { format: 'jpeg', quality: opts.quality, maxWidth: 1024, maxHeight: 600, everyNthFrame: 1 });
    log.debug({ url: page.url() }, 'screencast started');
  };

  const end = (cast: Cast) => {
    if (cast.ended) return;
    cast.ended = true;
    if (casts.get(cast.sessionId) === cast) casts.delete(cast.sessionId);
    enqueue(cast, () => detach(cast));
    logger.debug({ sessionId: cast.sessionId }, 'screencast stopped');
  };

  const follow = (cast: Cast) => {
    const page = cast.session.page;
    if (cast.target === page) return;
    cast.target = page;
    enqueue(cast, () =>
      attach(cast, page).catch((err) => {
        // Tried again at the next check, unless the agent has moved on meanwhile.
        if (cast.target === page) cast.target = undefined;
        throw err;
      }),
    );
  };

  const onDemand = ({ sessionId, first }: ScreencastDemand) => {
    const session = deps.pool.get(sessionId);
    if (!session || session.crashed || stopped) return;
    const leaseUntil = Date.now() + opts.leaseMs;
    const existing = casts.get(sessionId);
    if (existing && existing.session === session) {
      existing.leaseUntil = leaseUntil;
      // Without a picture yet, the attach under way publishes its screenshot.
      if (first && existing.lastFrame) pub.publish(frameChannel(sessionId), existing.lastFrame).catch(() => undefined);
      return;
    }
    if (existing) end(existing);
    const cast: Cast = { sessionId, session, leaseUntil, chain: Promise.resolve(), ended: false };
    casts.set(sessionId, cast);
    follow(cast);
  };

  const check = () => {
    const now = Date.now();
    for (const cast of casts.values()) {
      if (now > cast.leaseUntil || deps.pool.get(cast.sessionId) !== cast.session || cast.session.crashed) end(cast);
      else follow(cast);
    }
  };

  sub.on('message', (_channel: string, raw: string) => {
    try {
      const { sessionId, first } = JSON.parse(raw) as { sessionId?: unknown; first?: unknown };
      if (typeof sessionId === 'string') onDemand({ sessionId, first: first === true });
    } catch {
      logger.debug({ raw: raw.slice(0, 200) }, 'malformed screencast demand');
    }
  });
  sub.subscribe(SCREENCAST_DEMAND_CHANNEL).catch((err) => logger.error({ err }, 'screencast demand subscription failed'));
  const timer = setInterval(check, opts.checkMs);
  timer.unref();

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      const all = [...casts.values()];
      all.forEach(end);
      await Promise.all(all.map((c) => c.chain));
      await Promise.all([sub.quit().catch(() => sub.disconnect()), pub.quit().catch(() => pub.disconnect())]);
    },
  };
}
