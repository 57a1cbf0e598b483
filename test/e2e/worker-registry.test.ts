/**
 * Placement across browser workers against the test Redis (a database of its own): a burst
 * of starts spreads at once, before the workers' next heartbeats report their sessions.
 */
import Redis from 'ioredis';
import { WorkerRegistry } from '../../src/workers/worker-registry';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(`${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/12`);
});
afterAll(async () => {
  await redis.flushdb();
  redis.disconnect();
});

describe('worker registry', () => {
  it('counts sessions placed since the last heartbeat, so a burst spreads over the workers, until the heartbeat reports them', async () => {
    await redis.flushdb();
    const registry = new WorkerRegistry(redis, 5_000);
    await registry.heartbeat({ workerId: 'a', taskQueue: 'browser-a', sessions: 0, capacity: 10 });
    await registry.heartbeat({ workerId: 'b', taskQueue: 'browser-b', sessions: 0, capacity: 10 });
    const placed: Record<string, number> = {};
    for (let i = 0; i < 10; i++) {
      const w = await registry.pick();
      placed[w!.workerId] = (placed[w!.workerId] ?? 0) + 1;
      await registry.notePlaced(w!.workerId);
    }
    expect(placed).toEqual({ a: 5, b: 5 });
    // a's heartbeat reports its 5 sessions: what was placed there is no longer counted twice
    await registry.heartbeat({ workerId: 'a', taskQueue: 'browser-a', sessions: 5, capacity: 10 });
    await registry.heartbeat({ workerId: 'b', taskQueue: 'browser-b', sessions: 2, capacity: 10 });
    expect((await registry.pick())!.workerId).toBe('b');
    // a full worker is never picked, placed sessions included
    for (let i = 0; i < 8; i++) await registry.notePlaced('b');
    expect((await registry.pick())!.workerId).toBe('a');
    for (let i = 0; i < 5; i++) await registry.notePlaced('a');
    expect(await registry.pick()).toBeNull();
    // health counts what the workers report, not placements
    expect((await registry.alive()).map((w) => w.sessions).sort()).toEqual([2, 5]);
    await registry.remove('a');
    expect(await redis.hget('bas:workers:placed', 'a')).toBeNull();
  });
});
