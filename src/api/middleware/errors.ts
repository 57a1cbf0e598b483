import type { NextFunction, Request, Response } from 'express';
import { InvalidParamsError, ServiceError, isServiceError } from '../../contracts/errors';
import type { Logger } from '../../logger';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

/** The one place errors become the documented envelope; nothing leaks a stack trace. */
export function errorHandler(logger: Logger) {
  // Express recognises error middleware by its four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = toServiceError(err);
    if (e.status >= 500) logger.error({ err, method: req.method, path: req.path }, 'request failed');
    if (res.headersSent) return;
    res.status(e.status).json(e.toBody());
  };
}

function toServiceError(err: unknown): ServiceError {
  if (isServiceError(err)) return err;
  const bp = err as BodyParserError;
  if (bp?.type === 'entity.parse.failed') return new InvalidParamsError('Malformed JSON in request body');
  if (bp?.type === 'entity.too.large') return new ServiceError('PAYLOAD_TOO_LARGE', 'Request body is too large');
  if (bp?.type === 'encoding.unsupported' || bp?.type === 'charset.unsupported') return new InvalidParamsError(bp.message);
  if (typeof bp?.status === 'number' && bp.status >= 400 && bp.status < 500) return new ServiceError(bp.status === 413 ? 'PAYLOAD_TOO_LARGE' : bp.status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'INVALID_PARAMS', bp.message);
  return new ServiceError('INTERNAL_ERROR', 'Internal server error');
}

export interface RouteEntry {
  method: string;
  pattern: RegExp;
  /** Literal (non-parameter) segments of the route's path: the more, the more specific. */
  literals: number;
}

/**
 * The methods served at `path` by its most specific routes: a literal segment wins over a
 * parameter (POST /files/upload, not DELETE /files/:fileId, is what /files/upload is).
 * Empty when no route has the path.
 */
export function methodsAt(routes: RouteEntry[], path: string): string[] {
  const matching = routes.filter((r) => r.pattern.test(path));
  const best = Math.max(...matching.map((r) => r.literals));
  return [...new Set(matching.filter((r) => r.literals === best).map((r) => r.method))];
}

const allowHeader = (methods: string[]) => [...new Set(methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])))].join(', ');

/**
 * Before the routes: a method the path's own routes do not serve is 405 with `Allow`
 * (rather than reaching a less specific route), and OPTIONS is answered with `Allow`
 * where no route serves OPTIONS itself. `routes` is read at the first request, once every
 * route is declared.
 */
export function methodGuard(routes: () => RouteEntry[]) {
  let table: RouteEntry[] | undefined;
  return (req: Request, res: Response, next: NextFunction) => {
    table ??= routes();
    const methods = methodsAt(table, req.path);
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    if (!methods.length || methods.includes(method)) return next();
    res.set('Allow', allowHeader([...methods, 'OPTIONS']));
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    res.status(405).json(new ServiceError('METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed on ${req.path}`).toBody());
  };
}

/** Everything unknown is 404 JSON (a known path with another method was answered by methodGuard). */
export function notFoundHandler() {
  return (req: Request, res: Response) => {
    res.status(404).json(new ServiceError('NOT_FOUND', `No route for ${req.method} ${req.path}`).toBody());
  };
}
