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

const beat = (registry: WorkerRegistry, workerId: string, sessions: number, capacity = 10, known: string[] = []) => registry.heartbeat({ workerId, taskQueue: `browser-${workerId}`, sessions, capacity, known });
const tally = (ids: (string | undefined)[]) => ids.reduce<Record<string, number>>((acc, id) => ({ ...acc, [id ?? 'none']: (acc[id ?? 'none'] ?? 0) + 1 }), {});
let seq = 0;
/** A placement of a new session. */
const placeNew = (registry: WorkerRegistry, exclude: string[] = [], self?: Parameters<WorkerRegistry['place']>[2]) => registry.place(`s${++seq}`, exclude, self);

describe('worker registry', () => {
  it('counts sessions placed until a heartbeat of their worker names them, so a burst spreads over the workers', async () => {
    const registry = new WorkerRegistry(redis, 5_000);
    await beat(registry, 'a', 0);
    await beat(registry, 'b', 0);
    const placed: { id: string; worker?: string }[] = [];
    for (let i = 0; i < 10; i++) placed.push({ id: `burst${i}`, worker: (await registry.place(`burst${i}`))?.workerId });
    expect(tally(placed.map((p) => p.worker))).toEqual({ a: 5, b: 5 });
    const on = (worker: string) => placed.filter((p) => p.worker === worker).map((p) => p.id);
    // a's heartbeat reports its 5 sessions: what was placed there is no longer counted twice;
    // b holds 2 of its 5 (3 ended since its last heartbeat)
    await beat(registry, 'a', 5, 10, on('a'));
    await beat(registry, 'b', 2, 10, on('b'));
    expect(await placeNew(registry)).toEqual({ workerId: 'b', taskQueue: 'browser-b' });
    // a full worker is never picked, placed sessions included (b: 2 reported + 1 placed + 7 more)
    for (let i = 0; i < 7; i++) expect((await placeNew(registry, ['a']))?.workerId).toBe('b');
    expect(await placeNew(registry, ['a'])).toBeNull();
    for (let i = 0; i < 5; i++) expect((await placeNew(registry))?.workerId).toBe('a');
    expect(await placeNew(registry)).toBeNull();
    // health counts what the workers report, not placements
    expect((await registry.alive()).map((w) => w.sessions).sort()).toEqual([2, 5]);
    // a worker removed takes its placements with it
    await registry.remove('a');
    expect(Object.values(await redis.hgetall('bas:workers:pending')).filter((v) => v.startsWith('a|'))).toEqual([]);
    expect(Object.values(await redis.hgetall('bas:workers:pending')).filter((v) => v.startsWith('b|'))).toHaveLength(8);
  });

  it('keeps counting a placement whose browser a heartbeat did not report yet (its activity still on its way)', async () => {
    const registry = new WorkerRegistry(redis, 5_000);
    await beat(registry, 'two', 0, 2);
    expect((await registry.place('first'))?.workerId).toBe('two');
    // the worker beats before the session's browser is opened there: it holds none yet
    await beat(registry, 'two', 0, 2);
    expect((await registry.place('second'))?.workerId).toBe('two');
    await beat(registry, 'two', 1, 2, ['first']);
    // full: one held and reported, one placed and not reported yet
    expect(await registry.place('third')).toBeNull();
    // a session placed again (its worker lost) counts once, where it was placed last
    await beat(registry, 'other', 0, 1);
    expect((await registry.place('second', ['two']))?.workerId).toBe('other');
    expect((await registry.place('third'))?.workerId).toBe('two');
    // a placement whose browser never opened stops counting after 30 s
    await redis.hset('bas:workers:pending', 'third', `two|${Date.now() - 31_000}`);
    expect((await registry.place('fourth'))?.workerId).toBe('two');
    expect(await redis.hget('bas:workers:pending', 'third')).toBeNull();
  });

  it('compares room as a share of capacity, leaves out excluded and silent workers, and takes the caller by the live load it passes (on a tie too)', async () => {
    const registry = new WorkerRegistry(redis, 5_000);
    await beat(registry, 'small', 1, 2);
    await beat(registry, 'large', 4, 20);
    expect((await placeNew(registry))?.workerId).toBe('large');
    expect((await placeNew(registry, ['large']))?.workerId).toBe('small');
    // a worker whose last heartbeat is older than the TTL is gone
    await redis.hset('bas:workers', 'silent', JSON.stringify({ workerId: 'silent', taskQueue: 'browser-silent', sessions: 0, capacity: 10, heartbeatAt: Date.now() - 6_000 }));
    expect((await placeNew(registry))?.workerId).toBe('large');
    // an entry that is not what a heartbeat writes is passed over, never a failed placement
    await redis.hset('bas:workers', 'garbled', 'not json', 'empty', JSON.stringify({ workerId: 'empty', sessions: null, heartbeatAt: Date.now() }));
    expect((await placeNew(registry))?.workerId).toBe('large');
    // The caller's own entry says 0 sessions, but it holds 19 of 20 now: it goes elsewhere.
    await beat(registry, 'self', 0, 20);
    expect((await placeNew(registry, [], { workerId: 'self', taskQueue: 'browser-self', sessions: 19, capacity: 20 }))?.workerId).toBe('large');
    // large holds 8 of 20 (4 reported, 4 placed): the caller at 8 of 20 takes it on the tie, and it is counted for others
    expect(await registry.place('mine', [], { workerId: 'self', taskQueue: 'browser-self', sessions: 8, capacity: 20 })).toEqual({ workerId: 'self', taskQueue: 'browser-self' });
    expect(await redis.hget('bas:workers:pending', 'mine')).toMatch(/^self\|\d+$/);
    // excluded (a retry away from it) or full, the caller is not taken
    expect((await placeNew(registry, ['self'], { workerId: 'self', taskQueue: 'browser-self', sessions: 0, capacity: 20 }))?.workerId).toBe('large');
    expect((await placeNew(registry, [], { workerId: 'self', taskQueue: 'browser-self', sessions: 20, capacity: 20 }))?.workerId).toBe('large');
  });

  it("counts the sessions other processes placed on the caller's worker in its live load until it knows of them", async () => {
    const registry = new WorkerRegistry(redis, 5_000);
    await beat(registry, 'two', 0, 2);
    // another process (an API, the other worker's workflows) places two sessions on it
    expect((await registry.place('x1'))?.workerId).toBe('two');
    expect((await registry.place('x2'))?.workerId).toBe('two');
    // the worker itself has opened none of them yet: its live load says 0, but it is full
    const self = { workerId: 'two', taskQueue: 'browser-two', sessions: 0, capacity: 2, known: [] as string[] };
    expect(await placeNew(registry, [], self)).toBeNull();
    // x1 opened there and x2 ended: known to it, they are counted by its live load, not added again
    expect(await placeNew(registry, [], { ...self, sessions: 1, known: ['x1', 'x2'] })).toEqual({ workerId: 'two', taskQueue: 'browser-two' });
    await registry.remove('two');
    expect(await redis.hlen('bas:workers:pending')).toBe(0);
  });

  it('places a burst made by several processes at the same moment evenly: each placement sees the ones before it', async () => {
    const processes = [new Redis(url), new Redis(url), new Redis(url)];
    try {
      const registries = processes.map((r) => new WorkerRegistry(r, 5_000));
      await beat(registries[0], 'a', 0, 20);
      await beat(registries[0], 'b', 0, 20);
      await Promise.all(processes.map((r) => r.ping()));
      // 30 placements at once, 10 through each process: without one step for pick and note, they read the same counts and pile up
      const placed = await Promise.all(Array.from({ length: 30 }, (_, i) => registries[i % 3].place(`burst${i}`)));
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
