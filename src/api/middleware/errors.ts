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

/** Known paths with another method are 405; everything else unknown is 404, both JSON. */
export function notFoundHandler(routes: { method: string; pattern: RegExp }[]) {
  return (req: Request, res: Response) => {
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(req.path)).map((r) => r.method))];
    if (allowed.length) {
      res.set('Allow', allowed.join(', '));
      res.status(405).json(new ServiceError('METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed on ${req.path}`).toBody());
      return;
    }
    res.status(404).json(new ServiceError('NOT_FOUND', `No route for ${req.method} ${req.path}`).toBody());
  };
}
