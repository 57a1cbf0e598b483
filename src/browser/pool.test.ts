import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { BrowserPool } from './pool';
import { NetworkGuard } from '../net/network-guard';

const logger = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (cond: () => boolean, ms = 20_000) => {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await sleep(25);
  }
};

/** A site that sets a cookie and local storage, and shows the cookies it was sent. */
let server: http.Server;
let origin = '';
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/login') {
      res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'sid=secret-of-the-first-session; Path=/' });
      res.end('<script>localStorage.setItem("who", "first")</script>logged in');
      return;
    }
    if (req.url === '/slow') return void setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end('at last'), 1500);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<pre id="c">${req.headers.cookie ?? ''}</pre>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('ready browser contexts', () => {
  let pool: BrowserPool;
  beforeEach(() => {
    const port = new URL(origin).port;
    pool = new BrowserPool(
      { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, capacity: 8, ready: 2, guard: new NetworkGuard({ allowlist: `127.0.0.1:${port}` }) },
      logger,
    );
  });
  afterEach(() => pool.closeAll());

  it('hands each ready context to one session only, with its own relay, and refills after a burst', async () => {
    await pool.warm();
    await until(() => pool.readyCount === 2);
    // a burst larger than what is ready: the first two are ready ones, the rest are made on demand
    const opening = ['a', 'b', 'c', 'd', 'e'].map((id) => pool.open(id));
    // Placement counts the ones still being made: 2 held at once, 3 opening, 5 in the load.
    expect([pool.size, pool.load]).toEqual([2, 5]);
    // A reservation of one being opened adds nothing; one placed here and not opened yet counts.
    pool.reserve('e', 15_000);
    pool.reserve('z', 15_000);
    expect(pool.load).toBe(6);
    const sessions = await Promise.all(opening);
    expect([pool.size, pool.load]).toEqual([5, 6]);
    await pool.close('z'); // ended before its browser was opened
    expect([pool.size, pool.load]).toEqual([5, 5]);
    expect(pool.stats).toEqual({ warm: 2, cold: 3 });
    expect(new Set(sessions.map((s) => s.context)).size).toBe(5);
    expect(new Set(sessions.map((s) => s.egress.url)).size).toBe(5);
    expect(sessions.map((s) => s.egress.sessionId)).toEqual(['a', 'b', 'c', 'd', 'e']);
    // a retried open of the same session returns its context, never another ready one
    expect(await pool.open('a')).toBe(sessions[0]);
    await until(() => pool.readyCount === 2);
    expect(pool.stats.warm).toBe(2);
    // never past the capacity: 5 open + 2 ready of 8, and with 7 open only 1 stays ready
    await Promise.all(['f', 'g'].map((id) => pool.open(id)));
    await sleep(500);
    expect(pool.size + pool.readyCount).toBeLessThanOrEqual(8);
  });

  it('counts a session placed here until its browser is opened, closed, or its reservation ran out, never twice', async () => {
    pool.reserve('r1', 15_000);
    pool.reserve('r2', 15_000);
    expect(pool.load).toBe(2);
    // opened: counted once, as held
    await pool.open('r1');
    expect([pool.size, pool.load]).toEqual([1, 2]);
    // opened and closed again before anything else was placed: counts no more
    await pool.open('r2');
    await pool.close('r2');
    expect([pool.size, pool.load]).toEqual([1, 1]);
    // its open never came
    pool.reserve('r3', 200);
    expect(pool.load).toBe(2);
    await sleep(250);
    expect(pool.load).toBe(1);
    // a session already held is not reserved again
    pool.reserve('r1', 15_000);
    expect(pool.load).toBe(1);
  });

  it("names for the heartbeat the sessions it counts and those it had since the last heartbeat, ended ones included", async () => {
    pool.reserve('k1', 15_000);
    await pool.open('k2');
    await pool.open('k3');
    await pool.close('k3');
    // known to placement (no heartbeat yet): what is counted and what came and went
    expect(pool.known().sort()).toEqual(['k1', 'k2', 'k3']);
    expect(pool.known(true).sort()).toEqual(['k1', 'k2', 'k3']);
    // after the heartbeat, only what is still counted
    expect(pool.known().sort()).toEqual(['k1', 'k2']);
    await pool.close('k2');
    expect(pool.known(true)).toEqual(['k1']);
    expect(pool.known()).toEqual(['k1']);
  });

  it('counts a restored session once while its other tabs are still loading', async () => {
    const tab = (url: string) => ({ url, scroll: { x: 0, y: 0 }, fields: [] });
    const pages = { tabs: [tab(`${origin}/show`), tab(`${origin}/slow`)], active: 0 };
    const opening = pool.open('restored', { restore: { url: `${origin}/show`, storageState: JSON.stringify({ cookies: [], origins: [] }), pages } });
    await until(() => pool.size === 1);
    expect(pool.load).toBe(1);
    await opening;
    expect([pool.size, pool.load]).toEqual([1, 1]);
  });

  it("never lets a session's cookies or storage reach the next session", async () => {
    await pool.warm();
    await until(() => pool.readyCount === 2);
    const first = await pool.open('first');
    await first.page.goto(`${origin}/login`);
    expect(await first.page.evaluate(() => localStorage.getItem('who'))).toBe('first');
    await pool.close('first');
    await until(() => pool.readyCount === 2);
    for (const id of ['second', 'third']) {
      const next = await pool.open(id);
      expect(next.context).not.toBe(first.context);
      expect(await next.context.cookies()).toEqual([]);
      await next.page.goto(`${origin}/show`);
      expect(await next.page.textContent('#c')).toBe('');
      expect(await next.page.evaluate(() => localStorage.getItem('who'))).toBeNull();
    }
    expect(pool.stats.warm).toBe(3);
  });

  it('keeps ready contexts for plain sessions only: a restored session gets a context of its own', async () => {
    await pool.warm();
    await until(() => pool.readyCount === 2);
    const restored = await pool.open('restored', { restore: { url: 'about:blank', storageState: JSON.stringify({ cookies: [], origins: [] }) } });
    expect(pool.readyCount).toBe(2);
    expect(pool.stats).toEqual({ warm: 0, cold: 0 });
    expect(restored.egress.sessionId).toBe('restored');
  });
});
