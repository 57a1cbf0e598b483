import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { allowedPort } from './ports';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  at: number;
}

/** A receiver on `port` (by default one the service under test may reach); each path answers its planned statuses, the last repeating, 200 by default. */
export async function startReceiver(port = allowedPort()) {
  const received: Received[] = [];
  const plans = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const path = req.url ?? '/';
      let json: any = null;
      try {
        json = JSON.parse(body);
      } catch {
        /* kept as text */
      }
      received.push({ path, headers: req.headers, body, json, at: Date.now() });
      const plan = plans.get(path);
      const status = plan ? (plan.length > 1 ? plan.shift()! : plan[0]) : 200;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : `refused with ${status}`);
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    url: (path: string) => `http://127.0.0.1:${bound}${path}`,
    plan: (path: string, statuses: number[]) => plans.set(path, [...statuses]),
    at: (path: string) => received.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
