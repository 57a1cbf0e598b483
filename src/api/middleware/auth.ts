import type { NextFunction, Request, Response } from 'express';
import { ForbiddenError, ServiceError, UnauthorizedError } from '../../contracts/errors';
import type { Logger } from '../../logger';
import type { Store } from '../../store/store';
import type { UserRecord } from '../../store/users.repository';

declare module 'express-serve-static-core' {
  interface Request {
    user?: UserRecord;
  }
}

/** Bearer API key → the user, with the contract's exact messages; an expired key is 401 API_KEY_EXPIRED. */
export function requireApiKey(deps: { store: Store; logger: Logger }) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
    if (!match) return next(new UnauthorizedError('API key required', 'UNAUTHORIZED'));
    let user: UserRecord | null;
    try {
      const key = await deps.store.apiKeys.findActive(match[1]);
      if (key?.expiresAt && key.expiresAt.getTime() <= Date.now()) return next(new UnauthorizedError('API key expired', 'API_KEY_EXPIRED'));
      user = key ? await deps.store.users.get(key.userId) : null;
    } catch (err) {
      deps.logger.error({ err }, 'authentication lookup failed');
      return next(new ServiceError('AUTHENTICATION_ERROR', 'Authentication error'));
    }
    if (!user) return next(new UnauthorizedError('Invalid or revoked API key', 'INVALID_API_KEY'));
    if (user.status !== 'active') return next(new ForbiddenError('Account is deactivated'));
    req.user = user;
    next();
  };
}

export function currentUser(req: Request): UserRecord {
  if (!req.user) throw new UnauthorizedError();
  return req.user;
}
