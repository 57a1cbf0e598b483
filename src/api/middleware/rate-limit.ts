import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { RateLimitError } from '../../errors';

/**
 * Sliding-window limit in Redis, shared by every API instance. Every request counts,
 * failed ones included; the key is per user (all keys of a user share it) or per IP.
 */
export function rateLimit(deps: { redis: Redis; name: string; limit: number; windowMs: number; key: (req: Request) => string; reject?: (res: Response, err: RateLimitError) => void }) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const now = Date.now();
    const key = `bas:rl:${deps.name}:${deps.key(req)}`;
    const member = `${now}-${randomBytes(4).toString('hex')}`;
    const results = await deps.redis
      .multi()
      .zremrangebyscore(key, 0, now - deps.windowMs)
      .zadd(key, now, member)
      .zcard(key)
      .zrange(key, 0, 0, 'WITHSCORES')
      .pexpire(key, deps.windowMs)
      .exec();
    const count = Number(results?.[2]?.[1] ?? 0);
    const oldest = Number((results?.[3]?.[1] as string[] | undefined)?.[1] ?? now);
    const resetAt = oldest + deps.windowMs;
    res.set('X-RateLimit-Limit', String(deps.limit));
    res.set('X-RateLimit-Remaining', String(Math.max(0, deps.limit - count)));
    res.set('X-RateLimit-Reset', String(Math.ceil(resetAt / 1000)));
    if (count > deps.limit) {
      res.set('Retry-After', String(Math.max(1, Math.ceil((resetAt - now) / 1000))));
      const e = new RateLimitError();
      if (deps.reject) return deps.reject(res, e);
      res.status(429).json({ success: false, message: e.message, error: e.message, code: e.code });
      return;
    }
    next();
  };
}
