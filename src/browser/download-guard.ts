import { mkdtempSync, readdirSync, rmSync, statSync, watch, type FSWatcher } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, CDPSession, Download } from 'playwright-core';
import type { Logger } from '../logger';

/** What the guard knows of one download of the page: its verdict, for the one storing it. */
export interface DownloadWatch {
  /** The bytes seen on disk when the download was stopped (or found finished) past the cap; undefined while within it. */
  readonly oversize: number | undefined;
  /** For a finished download: checks its file once more (it may have finished between two checks) and answers `oversize`. */
  checkFinished(): number | undefined;
  /** The download is dealt with: the guard forgets it. */
  release(): void;
}

/** A download seen past the cap, by its guid. */
interface Stop {
  bytes: number;
  /** When it was first seen past the cap, and when the guard last asked Chromium to cancel it (ms), at what size. */
  at: number;
  cancelledAt: number;
  cancelledAtBytes: number;
}

/** The CDP session the guard cancels downloads of one Chromium through, and that browser's contexts. */
interface BrowserCdp {
  session: Promise<CDPSession>;
  contexts: string[];
  refreshing?: Promise<string[]>;
}

interface Tracked {
  download: Download;
  sessionId: string;
  taskId?: string;
}

/** How Playwright names a download in its downloads directory (allowAndName: the guid), with Chromium's suffix while in progress. */
const DOWNLOAD_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\.crdownload)?$/i;
/** A cancel that did not take (the file still grows) is asked again after this long. */
const RETRY_MS = 500;
/** Verdicts on downloads nobody tracks are forgotten after this long, once their files are gone. */
const FORGET_MS = 60_000;

/**
 * Keeps every download of the worker's Chromium under the size cap while it is in progress.
 *
 * Chromium writes downloads into a directory of this worker process (Playwright's
 * `downloadsPath`: `<guid>.crdownload` while in progress, `<guid>` once finished). The guard
 * checks a file's size on each change the kernel reports (fs.watch, inotify) and, as a
 * backstop, every `intervalMs`; once a file in progress passes `maxBytes`, it asks each
 * Chromium to cancel that guid (CDP Browser.cancelDownload, in every browser context: a
 * download the page started before Playwright reported it, or that Playwright never
 * reports, is stopped too). Chromium then deletes the partial file.
 *
 * How far past the cap a file gets is what arrives while the worker's event loop gets to
 * the change and one CDP round trip: download rate × (loop delay + round trip). Measured on
 * a busy 2-CPU machine: one 64 KB chunk past a 1 MB cap at 8 MB/s; 0.3 to 15 MB past a
 * 20 MB cap at the 100-200 MB/s of an unthrottled loopback download. Without change events
 * (fs.watch failing), add `intervalMs` (250 ms) of transfer.
 */
export class DownloadGuard {
  private readonly tracked = new Map<string, Tracked>();
  private readonly stops = new Map<string, Stop>();
  private readonly due = new Set<string>();
  private readonly cdp = new Map<Browser, BrowserCdp>();
  private watcher?: FSWatcher;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  private constructor(
    /** The directory Chromium downloads into (Playwright's `downloadsPath`). */
    readonly dir: string,
    private readonly opts: { maxBytes: number; logger: Logger; browsers: () => Iterable<Browser>; intervalMs: number },
  ) {
    try {
      this.watcher = watch(dir, (_event, name) => {
        if (name) this.schedule(String(name));
      });
      this.watcher.on('error', (err) => {
        this.opts.logger.warn({ err: String(err), dir }, 'downloads directory not watched; checked every interval only');
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (err) {
      this.opts.logger.warn({ err: String(err), dir }, 'downloads directory not watched; checked every interval only');
    }
    this.timer = setInterval(() => this.sweep(), opts.intervalMs);
    this.timer.unref();
  }

  /**
   * A guard on a new directory of this process (under `parentDir`, by default the system's
   * temporary directory). `browsers` are the Chromium processes downloading into it.
   */
  static create(opts: { maxBytes: number; logger: Logger; browsers: () => Iterable<Browser>; parentDir?: string; intervalMs?: number }): DownloadGuard {
    const parent = opts.parentDir ?? os.tmpdir();
    const dir = mkdtempSync(path.join(parent, `browser-downloads-${process.pid}-`));
    liveDirs.add(dir);
    sweepStaleDirs(parent, dir, opts.logger);
    return new DownloadGuard(dir, { maxBytes: opts.maxBytes, logger: opts.logger, browsers: opts.browsers, intervalMs: opts.intervalMs ?? 250 });
  }

  get maxBytes(): number {
    return this.opts.maxBytes;
  }

  /** Ties a download Playwright reported to its session, and gives its verdict to the one storing it. */
  track(download: Download, meta: { sessionId: string; taskId?: string }): DownloadWatch {
    const guid = guidOf(download, this.dir);
    // (it may have passed the cap already, before Playwright reported it: the verdict is there)
    if (guid) this.tracked.set(guid, { download, ...meta });
    const stops = this.stops;
    return {
      // (a getter: the verdict can come at any time)
      get oversize() {
        return guid ? stops.get(guid)?.bytes : undefined;
      },
      checkFinished: () => {
        if (!guid) return undefined;
        this.check(guid);
        return stops.get(guid)?.bytes;
      },
      release: () => {
        if (guid) this.tracked.delete(guid);
      },
    };
  }

  /** Stops watching and removes the directory (call once the browsers are closed). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.watcher?.close();
    for (const c of this.cdp.values()) void c.session.then((s) => s.detach()).catch(() => undefined);
    this.cdp.clear();
    this.tracked.clear();
    this.stops.clear();
    rmSync(this.dir, { recursive: true, force: true });
    liveDirs.delete(this.dir);
  }

  /** A change of a file: checked at once, a burst of changes once. */
  private schedule(name: string): void {
    if (this.closed || this.due.has(name)) return;
    // (not in this callback: one stat per burst of changes the loop delivers at once)
    this.due.add(name);
    setImmediate(() => {
      this.due.delete(name);
      this.check(name);
    });
  }

  /** The backstop: every file of the directory, and verdicts to forget. */
  private sweep(): void {
    if (this.closed) return;
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names) this.check(name);
    // While downloads are in progress, the contexts a cancel would go to are kept up to date.
    if (names.some((n) => n.endsWith('.crdownload'))) for (const b of this.opts.browsers()) if (b.isConnected()) void this.refresh(this.cdpOf(b));
    const now = Date.now();
    for (const [guid, stop] of this.stops) {
      if (!this.tracked.has(guid) && now - stop.at > FORGET_MS && !names.some((n) => n.startsWith(guid))) this.stops.delete(guid);
    }
  }

  /** One file (or a guid: its file whichever it is): past the cap in progress, it is cancelled; finished, it is marked. */
  private check(name: string): void {
    if (this.closed) return;
    const m = DOWNLOAD_FILE.exec(name);
    if (!m) return;
    const guid = m[1].toLowerCase();
    let partial = m[2] !== undefined;
    let size: number;
    try {
      size = statSync(path.join(this.dir, name)).size;
    } catch {
      if (m[2] !== undefined) return;
      // a guid given without suffix: the partial file, when the download is still in progress
      try {
        size = statSync(path.join(this.dir, `${name}.crdownload`)).size;
        partial = true;
      } catch {
        return;
      }
    }
    let stop = this.stops.get(guid);
    if (!stop) {
      if (size <= this.opts.maxBytes) return;
      stop = { bytes: size, at: Date.now(), cancelledAt: 0, cancelledAtBytes: 0 };
      this.stops.set(guid, stop);
      this.logStop(guid, stop, partial);
    }
    stop.bytes = Math.max(stop.bytes, size);
    if (!partial) return;
    // Chromium deletes the partial file once it cancels; one still growing a while after the ask is asked again.
    const now = Date.now();
    if (stop.cancelledAt && (now - stop.cancelledAt < RETRY_MS || size <= stop.cancelledAtBytes)) return;
    if (stop.cancelledAt) this.opts.logger.warn({ guid, bytes: size }, 'download past the size cap still growing; cancelling again');
    stop.cancelledAt = now;
    stop.cancelledAtBytes = size;
    void this.cancel(guid, stop);
  }

  private logStop(guid: string, stop: Stop, partial: boolean): void {
    const t = this.tracked.get(guid);
    this.opts.logger.warn(
      { sessionId: t?.sessionId, taskId: t?.taskId, guid, bytes: stop.bytes, maxBytes: this.opts.maxBytes },
      partial ? 'download stopped: it passed the size cap for downloads (FILE_MAX_BYTES)' : 'download finished past the size cap for downloads (FILE_MAX_BYTES): not kept',
    );
  }

  /** Asks every Chromium to cancel the download (only the one holding it can); Playwright's own cancel too when the download is tracked. */
  private async cancel(guid: string, stop: Stop): Promise<void> {
    const tries: Promise<unknown>[] = [...this.opts.browsers()].filter((b) => b.isConnected()).map((b) => this.cancelIn(b, guid));
    const t = this.tracked.get(guid);
    if (t) tries.push(t.download.cancel());
    if (!tries.length) {
      this.opts.logger.warn({ guid, bytes: stop.bytes }, 'download past the size cap not cancelled: no browser to ask');
      return;
    }
    try {
      await Promise.any(tries);
    } catch (err) {
      this.opts.logger.warn({ guid, bytes: stop.bytes, err: String(err instanceof AggregateError ? err.errors[0] : err) }, 'download past the size cap not cancelled yet');
    }
  }

  /** Opens the CDP session a cancel in `browser` goes through, and learns its contexts, ahead of time (a cancel then takes one round trip). */
  attach(browser: Browser): void {
    void this.refresh(this.cdpOf(browser));
  }

  private cdpOf(browser: Browser): BrowserCdp {
    let c = this.cdp.get(browser);
    if (!c) {
      const session = browser.newBrowserCDPSession();
      c = { session, contexts: [] };
      this.cdp.set(browser, c);
      session.catch(() => this.cdp.delete(browser));
      browser.once('disconnected', () => this.cdp.delete(browser));
    }
    return c;
  }

  /** The browser's contexts as Chromium names them (one question at a time), kept for the next cancel. */
  private refresh(c: BrowserCdp): Promise<string[]> {
    c.refreshing ??= c.session
      .then((s) => s.send('Target.getBrowserContexts'))
      .then(({ browserContextIds }) => (c.contexts = browserContextIds))
      .catch(() => c.contexts)
      .finally(() => (c.refreshing = undefined));
    return c.refreshing;
  }

  /**
   * Browser.cancelDownload in each context of one Chromium (and its default one, a
   * persistent context's): at once in the contexts known, then in any the browser has made since.
   */
  private async cancelIn(browser: Browser, guid: string): Promise<void> {
    const c = this.cdpOf(browser);
    const s = await c.session;
    const ask = (id?: string) => s.send('Browser.cancelDownload', id ? { guid, browserContextId: id } : { guid });
    const known = [undefined, ...c.contexts];
    const since = this.refresh(c).then((ids) => Promise.any(ids.filter((id) => !known.includes(id)).map(ask)));
    await Promise.any([...known.map(ask), since]);
  }
}

/** The directories of the guards open in this process (a pool each). */
const liveDirs = new Set<string>();

/**
 * Removes the downloads directories that worker processes killed before closing their guard
 * left behind: those whose process is gone (or is this one, when no guard of this process
 * holds it: a pid reused after a restart, in a container). Another live worker's directory on the same machine is left alone.
 */
export function sweepStaleDirs(parent: string, own: string, logger: Logger): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^browser-downloads-(\d+)-/.exec(name);
    const dir = path.join(parent, name);
    if (!m || dir === own || liveDirs.has(dir)) continue;
    const pid = Number(m[1]);
    if (pid !== process.pid && processAlive(pid)) continue;
    try {
      rmSync(dir, { recursive: true, force: true });
      logger.info({ dir }, 'downloads directory of a stopped worker removed');
    } catch (err) {
      logger.warn({ dir, err: String(err) }, 'downloads directory of a stopped worker not removed');
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's process.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The guid Chromium names a download's file by: the base name of the path Playwright
 * gives the download's artifact (not in its public API, so checked: undefined when it is
 * missing or outside `dir`; then the download is stopped all the same, only not tied to
 * its session).
 */
export function guidOf(download: Download, dir: string): string | undefined {
  const abs = (download as unknown as { _artifact?: { _initializer?: { absolutePath?: unknown } } })._artifact?._initializer?.absolutePath;
  if (typeof abs !== 'string' || path.dirname(abs) !== dir) return undefined;
  const m = DOWNLOAD_FILE.exec(path.basename(abs));
  return m && !m[2] ? m[1].toLowerCase() : undefined;
}
