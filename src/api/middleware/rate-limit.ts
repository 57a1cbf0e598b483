import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitError } from '../../contracts/errors';

interface LimitDeps {
  redis: Redis;
  name: string;
  limit: number;
  windowMs: number;
}

/**
 * rate-limiter-flexible counts in fixed windows by default; the contract's window slides.
 * This script (run by the library in place of its own, atomically in Redis) keeps a log of
 * the hits of the last window in a sorted set: hits older than the window are dropped, the
 * new hit is added whether or not it is allowed (every request counts), and the answer is
 * the hits in the window and the milliseconds until the oldest of them leaves it. Time is
 * Redis's own, so every API instance sees one clock. ARGV: points, window in seconds.
 * The library registers it on the Redis client under one command name: every limiter of
 * the service uses this script, none the library's default.
 */
export const SLIDING_WINDOW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local windowMs = tonumber(ARGV[2]) * 1000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
for i = 1, tonumber(ARGV[1]) do
  local member = t[1] .. t[2] .. '-' .. i
  local n = 0
  while redis.call('ZSCORE', KEYS[1], member .. '-' .. n) do n = n + 1 end
  redis.call('ZADD', KEYS[1], now, member .. '-' .. n)
end
local count = redis.call('ZCARD', KEYS[1])
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], windowMs)
local resetIn = windowMs
if oldest[2] then resetIn = tonumber(oldest[2]) + windowMs - now end
return {count, resetIn}
`;

const limiters = new WeakMap<Redis, Map<string, RateLimiterRedis>>();

/** One limiter per Redis client and limit (the library keeps no state of its own beyond Redis). */
function limiterFor(deps: LimitDeps): RateLimiterRedis {
  let byName = limiters.get(deps.redis);
  if (!byName) limiters.set(deps.redis, (byName = new Map()));
  const id = `${deps.name}:${deps.limit}:${deps.windowMs}`;
  let limiter = byName.get(id);
  if (!limiter) {
    limiter = new RateLimiterRedis({
      storeClient: deps.redis,
      keyPrefix: `bas:rl:${deps.name}`,
      points: deps.limit,
      duration: Math.max(1, Math.round(deps.windowMs / 1000)),
      customIncrTtlLuaScript: SLIDING_WINDOW_SCRIPT,
    });
    byName.set(id, limiter);
  }
  return limiter;
}

export interface Counted {
  allowed: boolean;
  remaining: number;
  /** When the oldest hit leaves the window (ms since the epoch). */
  resetAt: number;
  retryAfterS: number;
}

/** What the caller answers with, from the library's answer about one hit. */
export function countedFrom(res: Pick<RateLimiterRes, 'consumedPoints' | 'msBeforeNext'>, limit: number, now = Date.now()): Counted {
  const resetAt = now + Math.max(0, res.msBeforeNext);
  return {
    allowed: res.consumedPoints <= limit,
    remaining: Math.max(0, limit - res.consumedPoints),
    resetAt,
    retryAfterS: Math.max(1, Math.ceil((resetAt - now) / 1000)),
  };
}

/** Counts one request in the sliding window `name` of `key`; what the caller answers with. */
export async function countRequest(deps: LimitDeps, key: string): Promise<Counted> {
  const limiter = limiterFor(deps);
  try {
    return countedFrom(await limiter.consume(key), deps.limit);
  } catch (err) {
    // The library refuses with its answer when the limit is passed, and with an Error when Redis fails.
    if (err instanceof RateLimiterRes) return countedFrom(err, deps.limit);
    throw err;
  }
}

/** The headers of the contract on every limited response; `Retry-After` on a refusal. */
export function setLimitHeaders(res: Response, limit: number, counted: Counted): void {
  res.set('X-RateLimit-Limit', String(limit));
  res.set('X-RateLimit-Remaining', String(counted.remaining));
  res.set('X-RateLimit-Reset', String(Math.ceil(counted.resetAt / 1000)));
  if (!counted.allowed) res.set('Retry-After', String(counted.retryAfterS));
}

/**
 * Sliding-window limit in Redis, shared by every API instance. Every request counts,
 * failed ones included; the key is per user (all keys of a user share it) or per IP.
 */
export function rateLimit(deps: LimitDeps & { key: (req: Request) => string; reject?: (res: Response, err: RateLimitError) => void }) {
  // Named, so the OpenAPI document's test finds the routes it guards (each documents 429).
  return async function rateLimited(req: Request, res: Response, next: NextFunction) {
    const counted = await countRequest(deps, deps.key(req));
    setLimitHeaders(res, deps.limit, counted);
    if (!counted.allowed) {
      const e = new RateLimitError();
      if (deps.reject) return deps.reject(res, e);
      res.status(429).json({ success: false, message: e.message, error: e.message, code: e.code });
      return;
    }
    next();
  };
}
