/**
 * The rate limiter against the suite's Redis: its window slides (a request counts for the
 * whole window after it, not until a fixed boundary), and refused requests count too.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { countRequest } from '../../src/api/middleware/rate-limit';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('rate limit window', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391');
  });
  afterAll(() => redis.disconnect());

  it('slides: a request made later in a window still counts after the window of the first has passed', async () => {
    const deps = { redis, name: `test-${randomBytes(4).toString('hex')}`, limit: 2, windowMs: 6_000 };
    const user = 'usr_window';
    expect(await countRequest(deps, user)).toMatchObject({ allowed: true, remaining: 1 });
    await sleep(3_000);
    expect(await countRequest(deps, user)).toMatchObject({ allowed: true, remaining: 0 });
    // The first request has left the window; the second has not (a fixed window would start afresh here).
    await sleep(3_500);
    const third = await countRequest(deps, user);
    expect(third).toMatchObject({ allowed: true, remaining: 0 });
    const fourth = await countRequest(deps, user);
    expect(fourth).toMatchObject({ allowed: false, remaining: 0 });
    // Retry when the second request leaves the window: within the 6 s after it.
    expect(fourth.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(fourth.retryAfterS).toBeLessThanOrEqual(3);
    // The refused request counted too: the next one, once the second has left, is still refused while the third and fourth are in.
    expect(await redis.zcard(`bas:rl:${deps.name}:${user}`)).toBe(3);
  });
});
