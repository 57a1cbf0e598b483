import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { chromium, type Page } from 'playwright-core';
import { BrowserPool } from './pool';
import { DownloadGuard, sweepStaleDirs } from './download-guard';
import type { PersistDownload } from './artifacts';
import { NetworkGuard } from '../net/network-guard';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The cap of these tests, and how far past it a file may get: 250 ms (the backstop interval) of the endless download's ~8 MB/s. */
const CAP = 1024 * 1024;
const OVERSHOOT = 2 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (cond: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await sleep(20);
  }
};

/** A site with an endless download (64 KB every 8 ms, ~8 MB/s, until the client goes) and a small one. */
let server: http.Server;
let origin = '';
/** Endless downloads the server is still sending. */
let endlessOpen = 0;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/endless') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="endless.bin"' });
      endlessOpen += 1;
      const timer = setInterval(() => res.write(CHUNK), 8);
      res.on('close', () => {
        clearInterval(timer);
        endlessOpen -= 1;
      });
      return;
    }
    if (req.url === '/small') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="small.txt"' });
      res.end('hello');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<p>downloads</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

/** The largest size each file of `dir` reached, sampled every 5 ms until stopped. */
function sampleSizes(d: string) {
  const largest = new Map<string, number>();
  const timer = setInterval(() => {
    let names: string[] = [];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      try {
        largest.set(name, Math.max(largest.get(name) ?? 0, statSync(path.join(d, name)).size));
      } catch {
        // gone meanwhile
      }
    }
  }, 5);
  return {
    max: () => Math.max(0, ...largest.values()),
    stop: () => clearInterval(timer),
  };
}

/** The endless download is over: Chromium dropped the request, and deleted the partial file. */
const stopped = (dir: string) => endlessOpen === 0 && readdirSync(dir).length === 0;

/** Starts a download in the page (a navigation to it ends with "Download is starting"). */
const startDownload = async (page: Page, url: string) => {
  await Promise.all([page.waitForEvent('download'), page.goto(url).catch(() => undefined)]);
};

/**
 * Starts the endless download in the page and waits until it is over or has clearly run past
 * the cap; answers the largest size its file reached on disk.
 */
const downloadEndless = async (page: Page, dir: string): Promise<number> => {
  const sizes = sampleSizes(dir);
  try {
    await startDownload(page, `${origin}/endless`);
    await until(() => stopped(dir) || sizes.max() > CAP + OVERSHOOT);
  } finally {
    sizes.stop();
  }
  return sizes.max();
};

describe('download size cap', () => {
  let pool: BrowserPool;
  let lines: string[];
  let stored: { filename: string; body: string }[];
  beforeEach(() => {
    lines = [];
    stored = [];
    const persistDownload: PersistDownload = async ({ filename, stream }) => {
      const chunks: Buffer[] = [];
      for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
      stored.push({ filename, body: Buffer.concat(chunks).toString() });
      return { fileId: `f${stored.length}` };
    };
    pool = new BrowserPool(
      {
        executablePath: CHROMIUM,
        headless: true,
        capacity: 2,
        guard: new NetworkGuard({ allowlist: `127.0.0.1:${new URL(origin).port}` }),
        persistDownload,
        maxDownloadBytes: CAP,
      },
      pino({ level: 'info' }, { write: (l: string) => lines.push(l) }),
    );
  });
  afterEach(() => pool.closeAll());

  const logged = (msg: string) => lines.map((l) => JSON.parse(l)).filter((l) => String(l.msg).startsWith(msg));

  it('stops an endless download once it passes the cap, stores nothing of it, and still stores a small download', async () => {
    const session = await pool.open('s1');
    session.artifacts.taskId = 't1';
    const dir = pool.downloadsDir!;
    expect(path.dirname(dir)).toBe(os.tmpdir());
    // cancelled: Chromium drops the request, and the partial file
    const largest = await downloadEndless(session.page, dir);
    expect(largest).toBeLessThanOrEqual(CAP + OVERSHOOT);
    // Sizes are sampled: the chunk that passed the cap may land between the last two samples.
    expect(largest).toBeGreaterThanOrEqual(CAP);
    expect(stopped(dir)).toBe(true);

    expect((await session.artifacts.collect('t1')).files).toEqual([]);
    expect(stored).toEqual([]);
    const [stop] = logged('download stopped: it passed the size cap');
    expect(stop).toMatchObject({ level: 40, maxBytes: CAP });
    const [refused] = logged('download not stored: it passed the size cap');
    expect(refused).toMatchObject({ level: 40, sessionId: 's1', taskId: 't1', maxBytes: CAP });
    // Neither its address nor its name is logged: a page may put a typed secret in either.
    expect(JSON.stringify(refused)).not.toContain('endless');
    expect(refused.bytes).toBeGreaterThan(CAP);

    // a download within the cap is stored as before, and its copy on the worker's disk goes at once
    await startDownload(session.page, `${origin}/small`);
    const { files } = await session.artifacts.collect('t1');
    expect(files).toEqual([expect.objectContaining({ fileId: 'f1', filename: 'small.txt', source: `${origin}/small` })]);
    expect(stored).toEqual([{ filename: 'small.txt', body: 'hello' }]);
    await until(() => readdirSync(dir).length === 0);

    // the directory is the pool's: gone with it
    await pool.closeAll();
    expect(existsSync(dir)).toBe(false);
  }, 30_000);

  it('stops downloads of a session on its own profile (a persistent context) too', async () => {
    const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'download-guard-profile-'));
    try {
      const session = await pool.open('p1', { userDataDir });
      session.artifacts.taskId = 't2';
      const dir = pool.downloadsDir!;
      expect(await downloadEndless(session.page, dir)).toBeLessThanOrEqual(CAP + OVERSHOOT);
      expect(stopped(dir)).toBe(true);
      expect((await session.artifacts.collect('t2')).files).toEqual([]);
      expect(stored).toEqual([]);
      expect(logged('download not stored: it passed the size cap')).toEqual([expect.objectContaining({ sessionId: 'p1', taskId: 't2' })]);
    } finally {
      await pool.closeAll();
      rmSync(userDataDir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('DownloadGuard', () => {
  it('stops a download nobody reported to it (Playwright had not, or never does)', async () => {
    const lines: string[] = [];
    const browsers: import('playwright-core').Browser[] = [];
    const guard = DownloadGuard.create({ maxBytes: CAP, logger: pino({ level: 'info' }, { write: (l: string) => lines.push(l) }), browsers: () => browsers });
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, downloadsPath: guard.dir, chromiumSandbox: process.getuid?.() !== 0 });
    browsers.push(browser);
    try {
      const context = await browser.newContext({ acceptDownloads: true });
      const page = await context.newPage();
      const largest = await downloadEndless(page, guard.dir);
      expect(largest).toBeLessThanOrEqual(CAP + OVERSHOOT);
      // Sampled, as above: the crossing chunk may fall between two samples.
      expect(largest).toBeGreaterThanOrEqual(CAP);
      expect(stopped(guard.dir)).toBe(true);
      const stops = lines.map((l) => JSON.parse(l)).filter((l) => String(l.msg).startsWith('download stopped'));
      expect(stops).toEqual([expect.objectContaining({ level: 40, maxBytes: CAP })]);
      expect(stops[0].sessionId).toBeUndefined();
    } finally {
      await browser.close();
      guard.close();
    }
    expect(existsSync(guard.dir)).toBe(false);
  }, 30_000);
});

describe('downloads directories left behind', () => {
  it('are removed when their worker process is gone, and another live worker’s are kept', async () => {
    const parent = mkdtempSync(path.join(os.tmpdir(), 'guard-sweep-'));
    try {
      // A pid that surely ended: a child that exited.
      const { spawnSync } = await import('node:child_process');
      const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
      const gone = mkdtempSync(path.join(parent, `browser-downloads-${dead}-`));
      const live = mkdtempSync(path.join(parent, `browser-downloads-${process.ppid}-`));
      const reused = mkdtempSync(path.join(parent, `browser-downloads-${process.pid}-`));
      const other = mkdtempSync(path.join(parent, 'unrelated-'));
      const own = mkdtempSync(path.join(parent, `browser-downloads-${process.pid}-`));
      sweepStaleDirs(parent, own, pino({ level: 'silent' }));
      expect([gone, live, reused, other, own].map((d) => existsSync(d))).toEqual([false, true, false, true, true]);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});

