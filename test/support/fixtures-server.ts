import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };

/**
 * Serves the fixture pages on 127.0.0.1. Besides files: /slow?ms=N answers after N ms,
 * /hang never answers (navigation timeouts), /beacon?t= records a page's report (benchmarks),
 * /download/<name> answers a CSV attachment, /redirect?to=<url> answers 302 to it,
 * /embed?target=<origin> is a page that loads an image, a script, a fetch, a WebSocket and an
 * iframe from that origin (the network guard must keep all of them out), /flag?name=N answers
 * whether the flag N was raised and /flag?name=N&raise=1 raises it (a test tells a page when to
 * change).
 */
export async function startFixtureServer(dir: string): Promise<{ url: string; beacons: { t: number; at: number }[]; close(): Promise<void> }> {
  const hanging = new Set<http.ServerResponse>();
  const beacons: { t: number; at: number }[] = [];
  const flags = new Set<string>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/beacon') {
      beacons.push({ t: Number(url.searchParams.get('t')), at: Date.now() });
      res.writeHead(204).end();
      return;
    }
    if (url.pathname === '/flag') {
      const name = url.searchParams.get('name') ?? '';
      if (url.searchParams.get('raise') === '1') flags.add(name);
      res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' }).end(JSON.stringify({ raised: flags.has(name) }));
      return;
    }
    if (url.pathname === '/hang') {
      hanging.add(res);
      return;
    }
    if (url.pathname.startsWith('/download/')) {
      const name = path.basename(url.pathname);
      res.writeHead(200, { 'content-type': 'text/csv', 'content-disposition': `attachment; filename="${name}"` }).end('month,total\n2026-10,1234.50\n');
      return;
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      return;
    }
    if (url.pathname === '/embed') {
      const t = url.searchParams.get('target') ?? '';
      const ws = t.replace(/^http/, 'ws');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        `<title>Embedding page</title><h1>Embedding page</h1><p id="status">loading</p>` +
          `<img src="${t}/pixel.png"><script src="${t}/script.js"></script><iframe src="${t}/frame"></iframe>` +
          `<script>const done = [];const note = (n) => { done.push(n); document.getElementById('status').textContent = 'sub-resources tried: ' + done.sort().join(', '); };` +
          `fetch('${t}/api').then(() => note('fetch loaded'), () => note('fetch failed'));` +
          `try { const w = new WebSocket('${ws}/ws'); w.onopen = () => note('websocket open'); w.onerror = () => note('websocket failed'); } catch (e) { note('websocket failed'); }` +
          `</script>`,
      );
      return;
    }
    if (url.pathname === '/slow') {
      const ms = Number(url.searchParams.get('ms') ?? 1000);
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Slow</title><p>Slow page after ${ms} ms</p>`), ms);
      return;
    }
    const file = path.join(dir, path.normalize(url.pathname === '/' ? '/index.html' : url.pathname));
    if (!file.startsWith(dir) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    beacons,
    close: () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
