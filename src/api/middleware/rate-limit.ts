import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { RateLimitError } from '../../errors';

interface LimitDeps {
  redis: Redis;
  name: string;
  limit: number;
  windowMs: number;
}

/** Counts one request in the sliding window `name` of `key`; what the caller answers with. */
export async function countRequest(deps: LimitDeps, key: string): Promise<{ allowed: boolean; remaining: number; resetAt: number; retryAfterS: number }> {
  const now = Date.now();
  const redisKey = `bas:rl:${deps.name}:${key}`;
  const member = `${now}-${randomBytes(4).toString('hex')}`;
  const results = await deps.redis
    .multi()
    .zremrangebyscore(redisKey, 0, now - deps.windowMs)
    .zadd(redisKey, now, member)
    .zcard(redisKey)
    .zrange(redisKey, 0, 0, 'WITHSCORES')
    .pexpire(redisKey, deps.windowMs)
    .exec();
  const count = Number(results?.[2]?.[1] ?? 0);
  const oldest = Number((results?.[3]?.[1] as string[] | undefined)?.[1] ?? now);
  const resetAt = oldest + deps.windowMs;
  return { allowed: count <= deps.limit, remaining: Math.max(0, deps.limit - count), resetAt, retryAfterS: Math.max(1, Math.ceil((resetAt - now) / 1000)) };
}

/**
 * Sliding-window limit in Redis, shared by every API instance. Every request counts,
 * failed ones included; the key is per user (all keys of a user share it) or per IP.
 */
export function rateLimit(deps: LimitDeps & { key: (req: Request) => string; reject?: (res: Response, err: RateLimitError) => void }) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const counted = await countRequest(deps, deps.key(req));
    res.set('X-RateLimit-Limit', String(deps.limit));
    res.set('X-RateLimit-Remaining', String(counted.remaining));
    res.set('X-RateLimit-Reset', String(Math.ceil(counted.resetAt / 1000)));
    if (!counted.allowed) {
      res.set('Retry-After', String(counted.retryAfterS));
      const e = new RateLimitError();
      if (deps.reject) return deps.reject(res, e);
      res.status(429).json({ success: false, message: e.message, error: e.message, code: e.code });
      return;
    }
    next();
  };
}
