/**
 * Placement across browser workers against the test Redis (a database of its own): a burst
 * of starts spreads at once, before the workers' next heartbeats report their sessions, also
 * when several processes place at the same moment.
 */
import Redis from 'ioredis';
import { MongoClient } from 'mongodb';
import { WorkerRegistry } from '../../src/store/worker-registry';
import { api, waitFor } from '../support/http';
import { createUser, serviceEnv, startService } from '../support/service';

const url = `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/12`;
let redis: Redis;
beforeAll(() => {
  redis = new Redis(url);
});
beforeEach(() => redis.flushdb());
afterAll(async () => {
  await redis.flushdb();
  redis.disconnect();
});

const beat = (registry: WorkerRegistry, workerId: string, sessions: number, capacity = 10) => registry.heartbeat({ workerId, taskQueue: `browser-${workerId}`, sessions, capacity });
const tally = (ids: (string | undefined)[]) => ids.reduce<Record<string, number>>((acc, id) => ({ ...acc, [id ?? 'none']: (acc[id ?? 'none'] ?? 0) + 1 }), {});

describe('worker registry', () => {
  it('counts sessions placed since the last heartbeat, so a burst spreads over the workers, until the heartbeat reports them', async () => {
    const registry = new WorkerRegistry(redis, 5_000);
    await beat(registry, 'a', 0);
    await beat(registry, 'b', 0);
    const placed: (string | undefined)[] = [];
    for (let i = 0; i < 10; i++) placed.push((await registry.place())?.workerId);
    expect(tally(placed)).toEqual({ a: 5, b: 5 });
    // a's heartbeat reports its 5 sessions: what was placed there is no longer counted twice
    await beat(registry, 'a', 5);
    await beat(registry, 'b', 2);
    expect(await registry.place()).toEqual({ workerId: 'b', taskQueue: 'browser-b' });
    // a full worker is never picked, placed sessions included (b: 2 reported + 1 placed + 7 more)
    for (let i = 0; i < 7; i++) expect((await registry.place(['a']))?.workerId).toBe('b');
    expect(await registry.place(['a'])).toBeNull();
    for (let i = 0; i < 5; i++) expect((await registry.place())?.workerId).toBe('a');
    expect(await registry.place()).toBeNull();
    // health counts what the workers report, not placements
    expect((await registry.alive()).map((w) => w.sessions).sort()).toEqual([2, 5]);
    await registry.remove('a');
    expect(await redis.hget('bas:workers:placed', 'a')).toBeNull();
  });

  it('compares room as a share of capacity, leaves out excluded and silent workers, and takes the caller by the live load it passes (on a tie too)', async () => {
    const registry = new WorkerRegistry(redis, 5_000);
    await beat(registry, 'small', 1, 2);
    await beat(registry, 'large', 4, 20);
    expect((await registry.place())?.workerId).toBe('large');
    expect((await registry.place(['large']))?.workerId).toBe('small');
    // a worker whose last heartbeat is older than the TTL is gone
    await redis.hset('bas:workers', 'silent', JSON.stringify({ workerId: 'silent', taskQueue: 'browser-silent', sessions: 0, capacity: 10, heartbeatAt: Date.now() - 6_000 }));
    expect((await registry.place())?.workerId).toBe('large');
    // an entry that is not what a heartbeat writes is passed over, never a failed placement
    await redis.hset('bas:workers', 'garbled', 'not json', 'empty', JSON.stringify({ workerId: 'empty', sessions: null, heartbeatAt: Date.now() }));
    expect((await registry.place())?.workerId).toBe('large');
    // The caller's own entry says 0 sessions, but it holds 19 of 20 now: it goes elsewhere.
    await beat(registry, 'self', 0, 20);
    expect((await registry.place([], { workerId: 'self', taskQueue: 'browser-self', sessions: 19, capacity: 20 }))?.workerId).toBe('large');
    // large holds 8 of 20 (4 reported, 4 placed): the caller at 8 of 20 takes it on the tie, and it is counted for others
    expect(await registry.place([], { workerId: 'self', taskQueue: 'browser-self', sessions: 8, capacity: 20 })).toEqual({ workerId: 'self', taskQueue: 'browser-self' });
    expect(await redis.hget('bas:workers:placed', 'self')).toBe('1');
    // excluded (a retry away from it) or full, the caller is not taken
    expect((await registry.place(['self'], { workerId: 'self', taskQueue: 'browser-self', sessions: 0, capacity: 20 }))?.workerId).toBe('large');
    expect((await registry.place([], { workerId: 'self', taskQueue: 'browser-self', sessions: 20, capacity: 20 }))?.workerId).toBe('large');
  });

  it("counts the sessions other processes placed on the caller's worker in its live load until its next heartbeat", async () => {
    const registry = new WorkerRegistry(redis, 5_000);
    await beat(registry, 'two', 0, 2);
    // another process (an API, the other worker's workflows) places two sessions on it
    expect((await registry.place())?.workerId).toBe('two');
    expect((await registry.place())?.workerId).toBe('two');
    // the worker itself has opened none of them yet: its live load says 0, but it is full
    const self = { workerId: 'two', taskQueue: 'browser-two', sessions: 0, capacity: 2 };
    expect(await registry.place([], self)).toBeNull();
    // its own placement on itself is counted by its live load, not added again
    await beat(registry, 'two', 1, 2);
    expect(await registry.place([], { ...self, sessions: 1 })).toEqual({ workerId: 'two', taskQueue: 'browser-two' });
    expect(await registry.place([], { ...self, sessions: 1 })).toEqual({ workerId: 'two', taskQueue: 'browser-two' });
    await registry.remove('two');
    expect(await redis.hget('bas:workers:placed-by-others', 'two')).toBeNull();
  });

  it('places a burst made by several processes at the same moment evenly: each placement sees the ones before it', async () => {
    const processes = [new Redis(url), new Redis(url), new Redis(url)];
    try {
      const registries = processes.map((r) => new WorkerRegistry(r, 5_000));
      await beat(registries[0], 'a', 0, 20);
      await beat(registries[0], 'b', 0, 20);
      await Promise.all(processes.map((r) => r.ping()));
      // 30 placements at once, 10 through each process: without one step for pick and note, they read the same counts and pile up
      const placed = await Promise.all(Array.from({ length: 30 }, (_, i) => registries[i % 3].place()));
      expect(tally(placed.map((p) => p?.workerId))).toEqual({ a: 15, b: 15 });
    } finally {
      for (const r of processes) r.disconnect();
    }
  });
});

describe('a worker at its capacity', () => {
  it('takes sessions again as soon as the ones placed on it have ended, however many came before', async () => {
    // A worker of its own (Redis database, task queue) with room for 2 sessions.
    const service = await startService({ REDIS_URL: `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/13`, TEMPORAL_TASK_QUEUE: `capacity-${Date.now()}`, BROWSER_MAX_SESSIONS: '2' });
    const mongo = await MongoClient.connect(serviceEnv().MONGODB_URL);
    try {
      const { apiKey: key } = await createUser({ sessionLimit: 10 });
      for (let i = 0; i < 5; i++) {
        const started = await api(service.baseUrl, 'POST', '/start/start-session', { key, body: {} });
        expect({ session: i, status: started.status, body: started.body }).toMatchObject({ session: i, status: 200 });
        await api(service.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId: started.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
        // Ended: its workflow closed its browser before it recorded the end. (Even with the
        // one before still closing, a worker of 2 has room: only sessions still counted after
        // they ended would fill it.)
        // (Bounded at 60 s: the other test file running beside this one may hold both cores.)
        await waitFor(async () => ((await mongo.db().collection<{ _id: string; status: string }>('sessions').findOne({ _id: started.body.sessionId }))?.status === 'terminated' ? true : null), 60_000);
      }
    } finally {
      await mongo.close();
      await service.stop();
    }
  });
});
