import type { Redis } from 'ioredis';

/**
 * Bounded sets of holders (Socket.IO connections, WebRTC peers) in Redis, shared by every
 * API instance. Taking a slot is one Lua script (expire, count, add), so two instances can
 * never both take the last one. Each slot expires unless the process holding it refreshes
 * it, so the slots of an API instance that died free themselves within `ttlMs`.
 */
export class RedisSlots {
  private readonly held = new Map<string, { key: string; member: string }>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly ttlMs = 60_000,
  ) {
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), Math.max(100, Math.floor(ttlMs / 3)));
    this.timer.unref();
  }

  /** Takes a slot of `key` for `member` when fewer than `limit` are taken; answers how many are taken now. */
  async acquire(key: string, member: string, limit: number): Promise<{ ok: boolean; count: number }> {
    const now = Date.now();
    const [ok, count] = (await this.redis.eval(ACQUIRE, 1, key, member, String(limit), String(now), String(now + this.ttlMs), String(this.ttlMs))) as [number, number];
    if (ok === 1) this.held.set(`${key}\n${member}`, { key, member });
    return { ok: ok === 1, count };
  }

  async release(key: string, member: string): Promise<void> {
    this.held.delete(`${key}\n${member}`);
    await this.redis.zrem(key, member);
  }

  /** Slots taken now (the expired ones not counted). */
  async count(key: string): Promise<number> {
    return this.redis.zcount(key, Date.now() + 1, '+inf');
  }

  /** Stops refreshing; the slots still held are given back. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    const all = [...this.held.values()];
    this.held.clear();
    if (all.length) await Promise.all(all.map((h) => this.redis.zrem(h.key, h.member))).catch(() => undefined);
  }

  private async refresh(): Promise<void> {
    if (!this.held.size) return;
    const expiry = Date.now() + this.ttlMs;
    const batch = this.redis.multi();
    for (const { key, member } of this.held.values()) batch.zadd(key, 'XX', expiry, member).pexpire(key, this.ttlMs);
    await batch.exec();
  }
}

const ACQUIRE = `
local key, member = KEYS[1], ARGV[1]
local limit, now, expiry, ttl = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if redis.call('ZSCORE', key, member) then
  redis.call('ZADD', key, expiry, member)
  return {1, redis.call('ZCARD', key)}
end
local n = redis.call('ZCARD', key)
if n >= limit then return {0, n} end
redis.call('ZADD', key, expiry, member)
redis.call('PEXPIRE', key, ttl)
return {1, n + 1}
`;

/**
 * One hit of a sliding-window limit in Redis (all API instances share it): whether it is
 * within `limit` hits per `windowMs`, and when to try again if not. A refused hit does not
 * count.
 */
export async function windowHit(redis: Redis, key: string, limit: number, windowMs: number, member: string): Promise<{ ok: boolean; retryAfterMs: number }> {
  const now = Date.now();
  const [ok, oldest] = (await redis.eval(HIT, 1, key, String(limit), String(now), String(windowMs), `${now}-${member}`)) as [number, number];
  return { ok: ok === 1, retryAfterMs: ok === 1 ? 0 : Math.max(1, Number(oldest) + windowMs - now) };
}

const HIT = `
local key = KEYS[1]
local limit, now, window, member = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if redis.call('ZCARD', key) >= limit then
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {0, tonumber(first[2])}
end
redis.call('ZADD', key, now, member)
redis.call('PEXPIRE', key, window)
return {1, now}
`;
