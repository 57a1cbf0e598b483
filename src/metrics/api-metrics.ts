import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

/**
 * What an API process counts, served at GET /metrics on the API's port. Aggregate figures
 * only: no user, key, session or path with ids in any label, so whoever may read it learns
 * nothing of one user's work.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  private watched = false;

  readonly requests = new Counter({ name: 'browser_agent_http_requests_total', help: 'HTTP requests answered, by method and status', labelNames: ['method', 'status'], registers: [this.registry] });
  readonly errors = new Counter({ name: 'browser_agent_http_errors_total', help: 'Error answers, by error code', labelNames: ['code'], registers: [this.registry] });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'browser_agent_' });
  }

  /** Gauges read at each scrape: sessions alive across the service, Socket.IO connections of this process. */
  watch(sources: { liveSessions: () => Promise<number>; sockets: () => number }): void {
    if (this.watched) return;
    this.watched = true;
    new Gauge({
      name: 'browser_agent_live_sessions',
      help: 'Sessions alive (pending, active or orphaned) across the service',
      registers: [this.registry],
      async collect() {
        this.set(await sources.liveSessions());
      },
    });
    new Gauge({ name: 'browser_agent_socket_connections', help: 'Socket.IO connections open on this API process', registers: [this.registry], collect() { this.set(sources.sockets()); } });
  }

  /** Counts every answer by status, and error answers by their code (REST envelope or OpenAI error). */
  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        if (res.statusCode >= 400) {
          const code = errorCode(body);
          if (code) this.errors.inc({ code });
        }
        return json(body);
      };
      res.once('finish', () => this.requests.inc({ method: req.method, status: String(res.statusCode) }));
      next();
    };
  }
}

/** The code of an error body: `{code}` (REST) or `{error: {code}}` (OpenAI); anything but a word is left out. */
export function errorCode(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as { code?: unknown; error?: { code?: unknown } };
  const code = typeof b.code === 'string' ? b.code : typeof b.error === 'object' && b.error && typeof b.error.code === 'string' ? b.error.code : null;
  return code && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(code) ? code : null;
}

export const apiMetrics = new ApiMetrics();
