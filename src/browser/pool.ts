import { readPages, writePages, type PagesState, type UnrestoredTab } from './page-state';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { Logger } from '../logger';
import { SessionArtifacts, type PersistDownload } from './artifacts';
import { DownloadGuard } from './download-guard';
import { DEFAULT_FILE_MAX_BYTES } from '../config';
import { EgressRelay } from '../net/egress-relay';
import { isGuardRefusal, type NetworkGuard } from '../net/network-guard';
import { probeProxy } from '../net/proxy-probe';
import { TaskFailure } from '../contracts/errors';
import type { SessionProxy } from '../contracts/session-types';

export const VIEWPORT = { width: 1024, height: 600 } as const;

/**
 * Flags Chromium runs with: no calls home on a closed network, and WebRTC limited to proxied
 * connections, so a page can neither learn nor reach local addresses past the egress relay
 * (with an HTTP proxy that means no UDP at all, and no host candidates). The sandbox is
 * Playwright's `chromiumSandbox` option (off only where the worker runs as root).
 */
const CHROMIUM_ARGS = [
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
];

export interface BrowserSession {
  sessionId: string;
  context: BrowserContext;
  /** The tab the agent and the human act on. */
  page: Page;
  crashed: boolean;
  /** Downloads and requests of the session's pages, per task. */
  artifacts: SessionArtifacts;
  /** The owner, for files the session's pages download. */
  userId?: string;
  /** The session's way out: every request of its pages passes the network guard here. */
  egress: EgressRelay;
  /** USD per byte relayed, when the session runs on a managed (metered) proxy. */
  proxyPricePerByte?: number;
  /** The task whose share its metered traffic is charged to (the last one a step ran for). */
  billedTaskId?: string;
  /** When its pages last sent a request or navigated, or something acted on them (ms): a snapshot older than this is out of date. */
  changedAt: number;
  /** Woken from hibernation: tabs whose form values were not put back (they show another site now), until the agent is told. */
  unrestored?: UnrestoredTab[];
}

/** A context made ahead of any session, with its own relay and first page: handed to one session, once. */
interface ReadyContext {
  context: BrowserContext;
  page: Page;
  egress: EgressRelay;
}

/**
 * The one owner of Chromium in a worker process: one browser, one context per session.
 * Everything else reaches pages through the session handles it gives out.
 *
 * It keeps `ready` contexts made ahead (each with its own egress relay and a blank page),
 * so a plain session (no profile, no proxy, nothing to restore) starts without waiting for
 * Chromium. A ready context goes to exactly one session and never comes back: closing a
 * session closes its context. Taking one starts making its replacement in the background.
 */
/** What a session's browser is brought back from: a page and its storage; a hibernated one also has its tabs. */
export interface RestoreState {
  url: string;
  storageState: string;
  pages?: PagesState;
}

export interface OpenOptions {
  restore?: RestoreState;
  userDataDir?: string;
  userId?: string;
  proxy?: SessionProxy;
  /** Runs on the new context before a restored page loads in it (the session's domain guard). */
  prepare?: (context: BrowserContext) => Promise<void>;
}

/** A worker told to stop hands its sessions over before it closes Chromium: the signal is not Playwright's to act on. */
const LEFT_TO_THE_WORKER = { handleSIGTERM: false, handleSIGINT: false } as const;

export class BrowserPool {
  private browser?: Promise<Browser>;
  /** Every Chromium of the pool: the shared one and those of profile sessions (their downloads land in one directory). */
  private readonly chromiums = new Set<Browser>();
  /** Keeps downloads under the size cap while in progress (made with the first Chromium). */
  private guard?: DownloadGuard;
  private readonly sessions = new Map<string, BrowserSession>();
  private readonly ready: ReadyContext[] = [];
  private making = 0;
  /** Sessions whose context is being made (counted in the load before they are held). */
  private readonly opening = new Set<string>();
  /** Sessions placed here whose browser is not being opened yet, and until when they count. */
  private readonly reserved = new Map<string, number>();
  /** Sessions reserved, opened or adopted since the last heartbeat's `known`. */
  private readonly seen = new Set<string>();
  private closed = false;
  /** How many sessions got a ready context, and how many waited for a new one (for the benches and logs). */
  readonly stats = { warm: 0, cold: 0 };

  constructor(
    private readonly opts: {
      executablePath: string;
      headless: boolean;
      capacity: number;
      guard: NetworkGuard;
      /** Reads metered sessions' relays as their traffic flows, and once more before a relay closes. */
      meter?: { watch(session: BrowserSession): void; stop(session: BrowserSession): Promise<void> };
      /** Chromium's own sandbox; it cannot run as root. */
      sandbox?: boolean;
      /** Contexts kept ready for plain sessions (0: none). */
      ready?: number;
      maxNetworkEntries?: number;
      persistDownload?: PersistDownload;
      /** Largest download (FILE_MAX_BYTES): one passing it is stopped while in progress. Default: FILE_MAX_BYTES of the environment. */
      maxDownloadBytes?: number;
      /** Where the directory Chromium downloads into is made (one per pool, removed on closeAll); default: the system's temporary directory. */
      downloadsParentDir?: string;
    },
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions held, those whose browser is being opened and those placed here to be opened: what placement counts. */
  get load(): number {
    return this.counted().size;
  }

  private counted(): Set<string> {
    const now = Date.now();
    // (opening, adopting and closing a session end its reservation; here only the expired ones go)
    for (const [id, until] of this.reserved) if (until <= now) this.reserved.delete(id);
    // (a restored session is held while its other tabs are still being opened: counted once)
    return new Set([...this.sessions.keys(), ...this.opening, ...this.reserved.keys()]);
  }

  /**
   * The sessions counted in `load` and those placed, opened or held here since the last
   * `known(true)` (the heartbeat's: ended since, they hold nothing): the placements the
   * registry no longer counts apart once a heartbeat names them.
   */
  known(sinceBeat = false): string[] {
    const ids = [...new Set([...this.counted(), ...this.seen])];
    if (sinceBeat) this.seen.clear();
    return ids;
  }

  /**
   * A session was placed here: it counts in the load from now on, before its browser is
   * opened (moments later, by an activity on this worker's queue), so a burst of starts
   * spreads. The reservation ends once its browser is being opened, when it is closed, or
   * after `ms` (its open never came).
   */
  reserve(sessionId: string, ms: number): void {
    if (this.sessions.has(sessionId) || this.opening.has(sessionId)) return;
    this.reserved.set(sessionId, Date.now() + ms);
    this.seen.add(sessionId);
  }

  get capacity(): number {
    return this.opts.capacity;
  }

  /** The directory Chromium downloads into, watched by the guard (made on first use). */
  private downloads(): DownloadGuard {
    this.guard ??= DownloadGuard.create({
      // The worker passes FILE_MAX_BYTES from its configuration; a pool made without it (tests, benches) takes the default.
      maxBytes: this.opts.maxDownloadBytes ?? DEFAULT_FILE_MAX_BYTES,
      logger: this.logger,
      browsers: () => this.chromiums,
      parentDir: this.opts.downloadsParentDir,
    });
    return this.guard;
  }

  /** Where this pool's Chromium downloads to (undefined before the first launch and after closeAll). */
  get downloadsDir(): string | undefined {
    return this.guard?.dir;
  }

  /** A Chromium of the pool, counted for the download guard until it disconnects. */
  private own(b: Browser): Browser {
    this.chromiums.add(b);
    this.guard?.attach(b);
    b.on('disconnected', () => this.chromiums.delete(b));
    return b;
  }

  private launch(): Promise<Browser> {
    if (!this.browser) {
      const downloadsPath = this.downloads().dir;
      this.browser = chromium.launch({ executablePath: this.opts.executablePath, headless: this.opts.headless, chromiumSandbox: this.sandbox, args: CHROMIUM_ARGS, downloadsPath, ...LEFT_TO_THE_WORKER }).then((b) => {
        this.own(b);
        b.on('disconnected', () => {
          this.logger.warn('chromium disconnected');
          this.browser = undefined;
          for (const s of this.sessions.values()) s.crashed = true;
          for (const r of this.ready.splice(0)) void r.egress.close();
        });
        return b;
      });
      this.browser.catch(() => (this.browser = undefined));
    }
    return this.browser;
  }

  private get sandbox(): boolean {
    return this.opts.sandbox ?? process.getuid?.() !== 0;
  }

  /** Starts Chromium ahead of the first session, so that session does not wait for it, and fills the ready contexts. */
  async warm(): Promise<void> {
    await this.launch();
    this.refill();
  }

  /** Ready contexts waiting for a session. */
  get readyCount(): number {
    return this.ready.length;
  }

  /** Makes ready contexts in the background until there are `ready` of them (never past the session capacity). */
  private refill(): void {
    const want = Math.min(this.opts.ready ?? 0, Math.max(0, this.opts.capacity - this.sessions.size));
    while (!this.closed && this.ready.length + this.making < want) {
      this.making += 1;
      this.makeReady()
        .then((r) => {
          if (this.closed || !this.browser) return this.discard(r);
          this.ready.push(r);
        })
        .catch((err) => this.logger.warn({ err: String(err) }, 'ready browser context not made'))
        .finally(() => (this.making -= 1));
    }
  }

  private async makeReady(): Promise<ReadyContext> {
    const egress = await EgressRelay.start({ guard: this.opts.guard, logger: this.logger });
    try {
      const browser = await this.launch();
      const context = await browser.newContext({ viewport: VIEWPORT, acceptDownloads: true, proxy: { server: egress.url } });
      const page = await context.newPage();
      return { context, page, egress };
    } catch (err) {
      await egress.close();
      throw err;
    }
  }

  private async discard(r: ReadyContext): Promise<void> {
    await r.context.close().catch(() => undefined);
    await r.egress.close();
  }

  /** A ready context nobody has used, or none (a closed or crashed one is thrown away). */
  private takeReady(): ReadyContext | undefined {
    for (let r = this.ready.shift(); r; r = this.ready.shift()) {
      if (!r.page.isClosed()) return r;
      void this.discard(r);
    }
    return undefined;
  }

  /**
   * A plain session (no profile, proxy or restore) gets a ready context, at once; undefined
   * when none is ready (the caller opens one the slow way). The already open context of the
   * session is answered as it is.
   */
  openReady(sessionId: string, opts: { userId?: string } = {}): BrowserSession | undefined {
    const existing = this.sessions.get(sessionId);
    if (existing) return existing;
    const readyOne = this.takeReady();
    if (!readyOne) return undefined;
    readyOne.egress.assign(sessionId);
    this.stats.warm += 1;
    const session = this.adopt(sessionId, readyOne.context, readyOne.page, readyOne.egress, opts);
    this.refill();
    return session;
  }

  /**
   * Opens (or returns the already open) context of a session; idempotent for activity
   * retries. With `userDataDir` the session gets its own Chromium on that profile
   * directory (cookies, storage, extensions persist); `restore` brings back a page and
   * storage saved by another worker.
   */
  async open(sessionId: string, opts: OpenOptions = {}): Promise<BrowserSession> {
    const existing = this.sessions.get(sessionId);
    if (existing) return existing;
    const plain = !opts.restore && !opts.userDataDir && !opts.proxy;
    const warm = plain ? this.openReady(sessionId, opts) : undefined;
    if (warm) return warm;
    if (plain) this.stats.cold += 1;
    this.opening.add(sessionId);
    this.seen.add(sessionId);
    this.reserved.delete(sessionId);
    try {
      return await this.openCold(sessionId, opts);
    } finally {
      this.opening.delete(sessionId);
    }
  }

  /** A session's context made now (no ready one, or not a plain session). */
  private async openCold(sessionId: string, opts: OpenOptions): Promise<BrowserSession> {
    const { restore, userDataDir } = opts;
    const storageState = restore ? JSON.parse(restore.storageState) : undefined;
    // With a proxy, the relay chains to it: Chromium never sees its address or credentials.
    const upstream = opts.proxy ? await this.upstreamOf(sessionId, opts.proxy) : undefined;
    const egress = await EgressRelay.start({ guard: this.opts.guard, logger: this.logger, sessionId, upstream });
    // The context's only way out is its relay (Playwright makes Chromium proxy loopback too).
    const proxy = { server: egress.url };
    let context: BrowserContext | undefined;
    try {
      if (userDataDir) {
        context = await chromium.launchPersistentContext(userDataDir, {
          ...LEFT_TO_THE_WORKER,
          executablePath: this.opts.executablePath,
          headless: this.opts.headless,
          chromiumSandbox: this.sandbox,
          args: CHROMIUM_ARGS,
          viewport: VIEWPORT,
          acceptDownloads: true,
          downloadsPath: this.downloads().dir,
          proxy,
        });
        // (null only where Playwright has no browser object for a persistent context; tracked downloads are still cancelled)
        const own = context.browser();
        if (own) this.own(own);
        if (storageState?.cookies?.length) await context.addCookies(storageState.cookies);
      } else {
        const browser = await this.launch();
        context = await browser.newContext({ viewport: VIEWPORT, acceptDownloads: true, proxy, ...(storageState ? { storageState } : {}) });
      }
      // (before any restored page loads)
      await opts.prepare?.(context);
    } catch (err) {
      await context?.close().catch(() => undefined);
      await egress.close();
      throw err;
    }
    const page = context.pages()[0] ?? (await context.newPage());
    if (restore && /^https?:/.test(restore.url)) {
      await page.goto(restore.url, { waitUntil: 'domcontentloaded', timeout: 30_000 }).catch((err) => {
        this.logger.warn({ sessionId, err: String(err) }, 'restored page did not load');
      });
    }
    const session = this.adopt(sessionId, context, page, egress, opts);
    // A hibernated session: its other tabs, their fields and scroll positions, and the tab it was on.
    if (restore?.pages?.tabs.length) {
      const written = await writePages(context, page, restore.pages);
      session.page = written.page;
      if (written.unrestored.length) session.unrestored = written.unrestored;
    }
    this.refill();
    return session;
  }

  /** Makes a context the session's: its downloads, requests, crashes and new tabs are watched from here on. */
  private adopt(sessionId: string, context: BrowserContext, page: Page, egress: EgressRelay, opts: { userId?: string; proxy?: SessionProxy }): BrowserSession {
    const artifacts = new SessionArtifacts(sessionId, { maxRequests: this.opts.maxNetworkEntries ?? 500, persist: this.opts.persistDownload, logger: this.logger, downloads: this.guard });
    this.reserved.delete(sessionId);
    this.seen.add(sessionId);
    const session: BrowserSession = { sessionId, context, page, crashed: false, artifacts, userId: opts.userId, egress, proxyPricePerByte: opts.proxy?.pricePerByte, changedAt: Date.now() };
    context.on('request', (r) => {
      session.changedAt = Date.now();
      artifacts.onRequest(r);
    });
    this.watchPage(session, page);
    this.opts.meter?.watch(session);
    context.on('page', (p) => {
      // A tab the page opens (target=_blank, window.open) becomes the active one.
      this.watchPage(session, p);
      session.page = p;
    });
    this.sessions.set(sessionId, session);
    this.logger.info({ sessionId, open: this.sessions.size }, 'browser context opened');
    return session;
  }

  /**
   * The upstream URL the relay chains to: a user's proxy host must pass the network guard
   * (it is connected to by its checked address), and every proxy must accept a connection
   * and its credentials; otherwise the session fails with PROXY_CONNECTION_FAILED.
   */
  private async upstreamOf(sessionId: string, proxy: SessionProxy): Promise<string> {
    const u = new URL(proxy.url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const port = Number(u.port);
    const fail = (reason: string) => new TaskFailure('PROXY_CONNECTION_FAILED', `The proxy ${host}:${port} cannot be used: ${reason}`, { host, port, reason });
    if (proxy.source === 'custom') {
      try {
        const checked = await this.opts.guard.resolve(host, port, { sessionId });
        u.hostname = checked.family === 6 ? `[${checked.address}]` : checked.address;
      } catch (err) {
        throw fail(isGuardRefusal(err) ? err.message : `its name does not resolve (${(err as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
      }
    }
    try {
      await probeProxy(u.toString());
    } catch (err) {
      throw fail((err as Error).message);
    }
    return u.toString();
  }

  private watchPage(session: BrowserSession, page: Page): void {
    page.on('framenavigated', () => (session.changedAt = Date.now()));
    page.on('download', (d) => session.artifacts.onDownload(d));
    page.on('crash', () => {
      session.crashed = true;
      this.logger.warn({ sessionId: session.sessionId }, 'page crashed');
    });
    page.on('close', () => {
      if (session.page === page) {
        const rest = session.context.pages().filter((p) => p !== page);
        if (rest.length) session.page = rest[rest.length - 1];
      }
    });
  }

  /** All a hibernating session needs to wake on any worker: storage, every tab, their fields and scroll positions. */
  async hibernationState(sessionId: string): Promise<Required<RestoreState> | null> {
    const s = this.sessions.get(sessionId);
    if (!s || s.crashed) return null;
    const storageState = JSON.stringify(await s.context.storageState());
    const pages = await readPages(s.context, s.page);
    return { url: pages.tabs[0]?.url ?? s.page.url(), storageState, pages };
  }

  /** The page and storage of a session, so another worker can bring it back. */
  async snapshot(sessionId: string): Promise<{ url: string; storageState: string } | null> {
    const s = this.sessions.get(sessionId);
    if (!s || s.crashed) return null;
    const storageState = JSON.stringify(await s.context.storageState());
    return { url: s.page.url(), storageState };
  }

  ids(): string[] {
    return [...this.sessions.keys()];
  }

  get(sessionId: string): BrowserSession | undefined {
    return this.sessions.get(sessionId);
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  async close(sessionId: string): Promise<boolean> {
    this.reserved.delete(sessionId);
    const s = this.sessions.get(sessionId);
    if (!s) return false;
    this.sessions.delete(sessionId);
    await s.context.close().catch(() => undefined);
    await this.opts.meter?.stop(s).catch((err) => this.logger.warn({ err, sessionId }, 'last reading of the proxy traffic failed'));
    await s.egress.close();
    this.logger.info({ sessionId, open: this.sessions.size }, 'browser context closed');
    this.refill();
    return true;
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
    await Promise.all(this.ready.splice(0).map((r) => this.discard(r)));
    const b = this.browser;
    this.browser = undefined;
    if (b) await (await b.catch(() => undefined))?.close().catch(() => undefined);
    // every Chromium is closed: nothing writes into the downloads directory any more
    this.chromiums.clear();
    this.guard?.close();
    this.guard = undefined;
  }
}
