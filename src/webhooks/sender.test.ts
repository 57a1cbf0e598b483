import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyStatus, retryAfterMs, sendWebhook } from './sender';
import { verifiesWith } from '../../test/support/standard-webhooks';
import { newWebhookSecret } from '../contracts/webhook-signing';

describe('delivery outcomes', () => {
  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
    [301, 'retry'],
    [400, 'final'],
    [401, 'final'],
    [404, 'final'],
    [408, 'retry'],
    [410, 'final'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
  ])('HTTP %d is %s', (status, outcome) => expect(classifyStatus(status)).toBe(outcome));

  it('reads Retry-After in seconds or as a date', () => {
    expect(retryAfterMs('30')).toBe(30_000);
    expect(retryAfterMs('Mon, 23 Nov 2026 10:00:10 GMT', Date.parse('2026-11-23T10:00:00Z'))).toBe(10_000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });
});

describe('sendWebhook against a local receiver', () => {
  let server: http.Server;
  let url: string;
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  let answer: (res: http.ServerResponse) => void = (res) => res.writeHead(200).end('ok');

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        answer(res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => (received.length = 0));

  it('POSTs the body with the Standard Webhooks headers and the Authorization value', async () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ hello: 'world' });
    const res = await sendWebhook({ url, auth: 'Token s3cret', deliveryId: 'dlv_1', body, secrets: [secret], timeoutMs: 5000 });
    expect(res).toMatchObject({ outcome: 'delivered', statusCode: 200, error: null });
    const [got] = received;
    expect(got.body).toBe(body);
    expect(got.headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Token s3cret', 'webhook-id': 'dlv_1', 'x-delivery-id': 'dlv_1' });
    expect(verifiesWith(secret, got.body, got.headers)).toBe(true);
    expect(verifiesWith(newWebhookSecret(), got.body, got.headers)).toBe(false);
  });

  it('reports a refusal as final with its status, never with what the receiver answered', async () => {
    answer = (res) => res.writeHead(422, { 'content-type': 'text/plain' }).end('  unknown\n  event  ');
    expect(await sendWebhook({ url, deliveryId: 'd', body: '{}', secrets: [], timeoutMs: 5000 })).toMatchObject({ outcome: 'final', statusCode: 422, error: 'HTTP 422' });
  });

  it('retries a 429 with its Retry-After', async () => {
    answer = (res) => res.writeHead(429, { 'retry-after': '7' }).end();
    expect(await sendWebhook({ url, deliveryId: 'd', body: '{}', secrets: [], timeoutMs: 5000 })).toMatchObject({ outcome: 'retry', statusCode: 429, retryAfterMs: 7000 });
  });

  it('retries when nothing answers in time or nobody listens', async () => {
    answer = () => undefined; // never answers
    const slow = await sendWebhook({ url, deliveryId: 'd', body: '{}', secrets: [], timeoutMs: 300 });
    expect(slow).toMatchObject({ outcome: 'retry', statusCode: null, error: 'Request failed: no answer within 300 ms' });
    server.closeAllConnections();
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = await sendWebhook({ url: `http://127.0.0.1:${port}/hook`, deliveryId: 'd', body: '{}', secrets: [], timeoutMs: 2000 });
    expect(refused).toMatchObject({ outcome: 'retry', statusCode: null, error: 'Request failed: ECONNREFUSED' });
  });
});
