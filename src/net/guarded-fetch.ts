/**
 * A `fetch` for outgoing deliveries (webhooks, chat provider APIs) that goes through the
 * network guard: the name is resolved and checked by the guard, and the socket connects to
 * exactly the checked address (TLS still verifies the name). Redirects are never followed
 * and at most `maxBodyBytes` of an answer are read.
 */
import http from 'node:http';
import https from 'node:https';
import { fixedLookup, type NetworkGuard } from './network-guard';

export interface GuardedFetchOptions {
  maxBodyBytes?: number;
  context?: Record<string, unknown>;
}

export function guardedFetch(guard: NetworkGuard, opts: GuardedFetchOptions = {}): typeof fetch {
  const maxBody = opts.maxBodyBytes ?? 64 * 1024;
  return (async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`Only http and https addresses can be reached, not ${url.protocol}`);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const resolved = await guard.resolve(url.hostname, port, opts.context);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const body = init.body === undefined || init.body === null ? undefined : typeof init.body === 'string' ? init.body : Buffer.from(await new Response(init.body).arrayBuffer());
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const lib = url.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      // As fetch does: a timeout rejects with the signal's reason, a network error as the cause of a TypeError.
      const fail = (err: Error) => reject(init.signal?.aborted ? init.signal.reason : Object.assign(new TypeError('fetch failed'), { cause: err }));
      const req = lib.request(
        {
          protocol: url.protocol,
          hostname: url.hostname.replace(/^\[|\]$/g, ''),
          port,
          path: `${url.pathname}${url.search}`,
          method: init.method ?? 'GET',
          headers,
          lookup: fixedLookup(resolved),
          agent: false,
          signal: init.signal ?? undefined,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            if (size >= maxBody) return;
            chunks.push(c.subarray(0, maxBody - size));
            size += c.length;
            if (size >= maxBody) res.destroy();
          });
          const finish = () => {
            const status = res.statusCode ?? 502;
            const out = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
            const noBody = status === 204 || status === 205 || status === 304 || status < 200;
            resolve(new Response(noBody ? null : Buffer.concat(chunks), { status: Math.min(Math.max(status, 200), 599), headers: out }));
          };
          res.on('end', finish);
          res.on('close', finish);
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  }) as typeof fetch;
}
