import http from 'node:http';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger';

/** Whether the request carries `Authorization: Bearer <token>` (always, when no token is set). */
export function metricsAllowed(authorization: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  if (!m) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(m[1].trim()), digest(token));
}

const UNAUTHORIZED = { success: false, error: 'Metrics token required', code: 'UNAUTHORIZED', message: 'Metrics token required' };

/** The metric families of a text exposition, each with its HELP/TYPE lines and samples. */
function families(text: string): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const help = /^# HELP (\S+)/.exec(line);
    if (help || !out.length) out.push({ name: help?.[1] ?? '', text: '' });
    out[out.length - 1].text += `${line}\n`;
  }
  return out;
}

/**
 * The texts of several registries as one exposition: a family already given by an earlier
 * registry is left out of a later one (the process's default metrics, collected by both the
 * API's registry and a worker's in one process, appear once).
 */
export async function renderAll(registries: Registry[]): Promise<string> {
  const seen = new Set<string>();
  let out = '';
  for (const registry of registries) {
    for (const family of families(await registry.metrics())) {
      if (family.name && seen.has(family.name)) continue;
      seen.add(family.name);
      out += family.text;
    }
  }
  return out;
}

/** The registries' text, and the text of another exporter (the Temporal SDK's) after it when given. */
async function render(registries: Registry[], extra?: string): Promise<string> {
  const own = await renderAll(registries);
  if (!extra) return own;
  const more = await fetch(extra, { signal: AbortSignal.timeout(2000) })
    .then((r) => (r.ok ? r.text() : ''))
    .catch(() => '');
  return more ? `${own.trimEnd()}\n${more}` : own;
}

/**
 * GET /metrics on the API's Express app: the API's registry, and when a worker runs in the
 * same process (ROLE=all) its registry and the Temporal SDK's exporter too, so one scrape
 * of the one documented port sees everything.
 */
export function metricsRoute(registry: Registry, token: string | undefined, worker?: { registry: Registry; temporalUrl?: string }) {
  return async (req: Request, res: Response, next: NextFunction) => {
    if (!metricsAllowed(req.get('authorization'), token)) {
      res.status(401).set('WWW-Authenticate', 'Bearer').json(UNAUTHORIZED);
      return;
    }
    try {
      res.type(registry.contentType).send(await render(worker ? [registry, worker.registry] : [registry], worker?.temporalUrl));
    } catch (err) {
      next(err);
    }
  };
}

/**
 * A worker's own metrics server: GET /metrics with the registry and, when `temporalUrl` is
 * given, the metrics the Temporal SDK's core exports on its loopback port.
 */
export async function startMetricsServer(opts: { registry: Registry; host: string; port: number; token?: string; temporalUrl?: string; logger: Logger }): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, error: 'Not found', code: 'NOT_FOUND', message: `No route for ${req.method} ${path}` }));
      return;
    }
    if (!metricsAllowed(req.headers.authorization, opts.token)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end(JSON.stringify(UNAUTHORIZED));
      return;
    }
    render([opts.registry], opts.temporalUrl).then(
      (text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(text),
      (err: unknown) => {
        opts.logger.warn({ err }, 'metrics failed');
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, resolve);
  });
  const port = (server.address() as import('node:net').AddressInfo).port;
  opts.logger.info({ port }, 'metrics listening');
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
