import http from 'node:http';
import pino from 'pino';
import type { AddressInfo } from 'node:net';
import { guardedFetch } from './guarded-fetch';
import { NetworkGuard, isGuardRefusal } from './network-guard';
import { sendWebhook } from '../webhooks/sender';
import { sendChatMessage } from '../environments/chat-sender';

describe('deliveries through the network guard', () => {
  let server: http.Server;
  let port: number;
  let connections = 0;
  const paths: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      paths.push(req.url ?? '');
      if (req.url === '/redirect') return void res.writeHead(302, { location: `http://127.0.0.1:${port}/after` }).end();
      req.resume();
      req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end('internal secret: hunter2'));
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    connections = 0;
    paths.length = 0;
  });

  const hook = (url: string, fetchImpl: typeof fetch) => sendWebhook({ url, deliveryId: 'd1', body: '{}', secrets: [], timeoutMs: 3000 }, fetchImpl);

  it.each(['127.0.0.1', '[::ffff:127.0.0.1]', '2130706433', '127.1', 'localhost'])('makes no connection to %s and records why, as final', async (host) => {
    const res = await hook(`http://${host}:${port}/hook`, guardedFetch(new NetworkGuard()));
    // the same words for every refusal: the reason is the operator's (logged), never the user's
    expect(res).toMatchObject({ outcome: 'final', statusCode: null, error: 'Not sent: the address could not be reached or is not allowed' });
    expect(connections).toBe(0);
  });

  it('says the same of a name that does not resolve as of a private one, and logs the difference', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => lines.push(l) });
    const nowhere = Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    const guard = new NetworkGuard({ logger, resolver: async (h) => (h === 'redis' ? [{ address: '10.0.0.7', family: 4 }] : Promise.reject(nowhere)) });
    const [internal, unknown] = [await hook('http://redis/hook', guardedFetch(guard)), await hook('http://no-such-name/hook', guardedFetch(guard))];
    expect(internal).toEqual({ ...unknown, durationMs: internal.durationMs });
    expect(unknown).toMatchObject({ outcome: 'final', error: 'Not sent: the address could not be reached or is not allowed' });
    expect(lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'network guard refused a destination')).toEqual([
      expect.objectContaining({ host: 'redis', reason: 'a private address' }),
      expect.objectContaining({ host: 'no-such-name', reason: 'not resolved (ENOTFOUND)' }),
    ]);
    // behind an upstream proxy, a name this machine cannot resolve is the proxy's to resolve
    await expect(guard.checkThroughProxy('no-such-name', 80)).resolves.toBeUndefined();
    await expect(guard.checkThroughProxy('redis', 80)).rejects.toMatchObject({ message: 'the address could not be reached or is not allowed' });
  });

  it('reaches an allowlisted port, and never echoes what the receiver answered', async () => {
    const res = await hook(`http://127.0.0.1:${port}/hook`, guardedFetch(new NetworkGuard({ allowlist: `127.0.0.1:${port}` })));
    expect(res).toMatchObject({ outcome: 'retry', statusCode: 500, error: 'HTTP 500' });
    expect(paths).toEqual(['/hook']);
  });

  it('does not follow a redirect', async () => {
    const res = await hook(`http://127.0.0.1:${port}/redirect`, guardedFetch(new NetworkGuard({ allowlist: `127.0.0.1:${port}` })));
    expect(res).toMatchObject({ outcome: 'retry', statusCode: 302 });
    expect(paths).toEqual(['/redirect']);
  });

  it('connects to the address it checked: a name is resolved once (no rebinding between check and use)', async () => {
    const answers = ['127.0.0.1', '10.0.0.1'];
    let lookups = 0;
    const guard = new NetworkGuard({ allowlist: `127.0.0.1:${port}`, resolver: async () => [{ address: answers[lookups++] ?? '10.0.0.1', family: 4 }] });
    const res = await hook(`http://rebind.test:${port}/hook`, guardedFetch(guard));
    expect(res.statusCode).toBe(500);
    expect(lookups).toBe(1);
    expect(paths).toEqual(['/hook']);
    // the next resolution says 10.0.0.1: refused, nothing connects
    const again = await hook(`http://rebind.test:${port}/hook`, guardedFetch(guard));
    expect(again.error).toBe('Not sent: the address could not be reached or is not allowed');
    expect(paths).toEqual(['/hook']);
  });

  it('refuses a name that resolves to cloud metadata', async () => {
    const guard = new NetworkGuard({ resolver: async () => [{ address: '169.254.169.254', family: 4 }] });
    const err = await guard.resolve('metadata.test', 80).catch((e) => e);
    expect(isGuardRefusal(err) && err.reason).toContain('link-local');
  });

  it('logs each refusal with host, port and reason, never the path or query', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => lines.push(l) });
    await hook(`http://localhost:${port}/hook/private-path?token=abc123`, guardedFetch(new NetworkGuard({ logger })));
    const entry = JSON.parse(lines.find((l) => l.includes('network guard refused'))!);
    expect(entry).toMatchObject({ host: 'localhost', port, reason: 'a private address (loopback)', resolvedTo: '127.0.0.1' });
    expect(lines.join('')).not.toMatch(/private-path|abc123/);
  });

  it('chat deliveries (a Teams webhook URL of the user) go through the guard too', async () => {
    const res = await sendChatMessage('teams', { webhookUrl: `http://127.0.0.1:${port}/teams` }, 'hi', { fetch: guardedFetch(new NetworkGuard()) });
    expect(res).toMatchObject({ outcome: 'final', error: expect.stringContaining('could not be reached or is not allowed') });
    expect(connections).toBe(0);
  });
});
