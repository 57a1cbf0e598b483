import { createLogger } from '../logger';
import type { Config } from '../config';
import type { Store } from '../store/store';
import type { EventPublisher } from '../events/publisher';
import type { SelfWorker, WorkerEntry, WorkerRegistry } from '../store/worker-registry';
import { createSessionActivities, type LocalBrowserWorker } from './session.activities';

const entry = (workerId: string, sessions: number, capacity = 10): WorkerEntry => ({ workerId, taskQueue: `browser-${workerId}`, sessions, capacity, heartbeatAt: Date.now() });

/**
 * The registry's placement as the real one makes it (its script is tested against Redis in
 * test/e2e/worker-registry.test.ts): most free room first, excluded ones left out, the
 * caller's own worker by the live load it passes and on a tie; the placement is counted.
 */
function registryOf(entries: WorkerEntry[]): WorkerRegistry {
  return {
    place: async (_sessionId: string, exclude: string[] = [], self?: SelfWorker) => {
      const best = entries
        .filter((w) => w.workerId !== self?.workerId && !exclude.includes(w.workerId) && w.sessions < w.capacity)
        .sort((a, b) => a.sessions / a.capacity - b.sessions / b.capacity)[0];
      const chosen = self && !exclude.includes(self.workerId) && self.sessions < self.capacity && (!best || self.sessions / self.capacity <= best.sessions / best.capacity) ? self : best;
      if (!chosen) return null;
      const w = entries.find((e) => e.workerId === chosen.workerId);
      if (w) w.sessions += 1;
      return { workerId: chosen.workerId, taskQueue: chosen.taskQueue };
    },
  } as unknown as WorkerRegistry;
}

/**
 * The process's own browser worker as the pool makes it: `sessions` held, plus the sessions
 * placed here until they are held (`held`, as the pool's open does) or handed a ready context.
 */
function setup(entries: WorkerEntry[], here: { sessions: number; capacity?: number; fails?: boolean; noneReady?: boolean; held?: Set<string> } | null) {
  const opened: string[] = [];
  const reserved = new Set<string>();
  const local: LocalBrowserWorker | undefined = here
    ? {
        workerId: 'here',
        taskQueue: 'browser-here',
        load: () => {
          for (const id of reserved) if (here.held?.has(id)) reserved.delete(id);
          return { sessions: here.sessions + reserved.size, capacity: here.capacity ?? 10, known: [...reserved] };
        },
        openReady: (sessionId) => {
          if (here.fails) throw new Error('Chromium is gone');
          if (here.noneReady) return false;
          opened.push(sessionId);
          reserved.delete(sessionId);
          here.sessions += 1;
          return true;
        },
        reserve: (sessionId) => void reserved.add(sessionId),
      }
    : undefined;
  const store = { db: { collection: () => ({}) } } as unknown as Store;
  const activities = createSessionActivities({
    config: {} as Config,
    store,
    registry: registryOf(entries),
    events: {} as EventPublisher,
    logger: createLogger('silent'),
    local,
  });
  return { place: activities.placeSession, opened };
}

describe('placing a session on a browser worker', () => {
  it('opens a plain session where its workflow runs when this worker has as much room as the best other', async () => {
    const { place, opened } = setup([entry('here', 3), entry('other', 3)], { sessions: 3 });
    await expect(place({ sessionId: 's1', exclude: [], open: { userId: 'u' } })).resolves.toEqual({ workerId: 'here', taskQueue: 'browser-here', opened: true });
    expect(opened).toEqual(['s1']);
  });

  it('reads its own load live: the registry may still show sessions that ended', async () => {
    const { place } = setup([entry('here', 8), entry('other', 2)], { sessions: 1 });
    await expect(place({ sessionId: 's1', exclude: [], open: { userId: 'u' } })).resolves.toMatchObject({ workerId: 'here', opened: true });
  });

  it("goes by its own live load, not its registry entry, so a burst started here spreads to the others", async () => {
    // the registry still shows this worker empty (its last heartbeat), but it holds 3 sessions now
    const { place, opened } = setup([entry('here', 0), entry('other', 0)], { sessions: 3 });
    await expect(place({ sessionId: 's1', exclude: [], open: { userId: 'u' } })).resolves.toEqual({ workerId: 'other', taskQueue: 'browser-other' });
    expect(opened).toEqual([]);
  });

  it('counts sessions placed here whose browser is not open yet, so a burst with no ready context spreads', async () => {
    const held = new Set<string>();
    const here = { sessions: 0, noneReady: true, held };
    const { place, opened } = setup([entry('here', 0), entry('other', 0)], here);
    const chosen: string[] = [];
    for (const id of ['s1', 's2', 's3', 's4']) chosen.push((await place({ sessionId: id, exclude: [], open: { userId: 'u' } }))!.workerId);
    expect(chosen).toEqual(['here', 'other', 'here', 'other']);
    expect(opened).toEqual([]);
    // Once open here, they count in the live load only, not twice: 2 here against 2 there, a tie this worker takes.
    held.add('s1');
    held.add('s3');
    here.sessions = 2;
    await expect(place({ sessionId: 's5', exclude: [], open: { userId: 'u' } })).resolves.toMatchObject({ workerId: 'here' });
  });

  it('places a burst started at once one after another, so it spreads', async () => {
    const { place } = setup([entry('here', 0), entry('other', 0), entry('third', 0)], { sessions: 0, noneReady: true });
    const placed = await Promise.all(['s1', 's2', 's3', 's4', 's5', 's6'].map((id) => place({ sessionId: id, exclude: [], open: { userId: 'u' } })));
    const counts = placed.reduce<Record<string, number>>((acc, p) => ({ ...acc, [p!.workerId]: (acc[p!.workerId] ?? 0) + 1 }), {});
    expect(counts).toEqual({ here: 2, other: 2, third: 2 });
  });

  it('a placement whose registry read hangs holds the next one for at most 2 s', async () => {
    const registry = registryOf([entry('other', 0)]);
    const place = registry.place.bind(registry);
    let calls = 0;
    registry.place = (sessionId: string, exclude?: string[]) => (++calls === 1 ? new Promise<never>(() => undefined) : place(sessionId, exclude));
    const activities = createSessionActivities({ config: {} as Config, store: { db: { collection: () => ({}) } } as unknown as Store, registry, events: {} as EventPublisher, logger: createLogger('silent') });
    void activities.placeSession({ sessionId: 'stuck', exclude: [] });
    const t0 = Date.now();
    await expect(activities.placeSession({ sessionId: 's2', exclude: [] })).resolves.toMatchObject({ workerId: 'other' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_900);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('sends the session to a worker with more room, which opens the browser itself', async () => {
    const { place, opened } = setup([entry('here', 4), entry('other', 1)], { sessions: 4 });
    await expect(place({ sessionId: 's1', exclude: [], open: { userId: 'u' } })).resolves.toEqual({ workerId: 'other', taskQueue: 'browser-other' });
    expect(opened).toEqual([]);
  });

  it('compares room as a share of each capacity', async () => {
    const { place } = setup([entry('other', 3, 4)], { sessions: 5, capacity: 20 });
    await expect(place({ sessionId: 's1', exclude: [], open: { userId: 'u' } })).resolves.toMatchObject({ workerId: 'here', opened: true });
  });

  it('only picks a worker for sessions that are not plain (profile, proxy, restore): their browser opens on its queue', async () => {
    const { place, opened } = setup([entry('other', 5)], { sessions: 0 });
    await expect(place({ sessionId: 's1', exclude: [] })).resolves.toEqual({ workerId: 'here', taskQueue: 'browser-here' });
    expect(opened).toEqual([]);
  });

  it('never places on a full or excluded worker of its own', async () => {
    const full = setup([entry('other', 9)], { sessions: 10 });
    await expect(full.place({ sessionId: 's1', exclude: [], open: { userId: 'u' } })).resolves.toEqual({ workerId: 'other', taskQueue: 'browser-other' });
    const excluded = setup([entry('here', 0), entry('other', 9)], { sessions: 0 });
    await expect(excluded.place({ sessionId: 's1', exclude: ['here'], open: { userId: 'u' } })).resolves.toEqual({ workerId: 'other', taskQueue: 'browser-other' });
    expect(excluded.opened).toEqual([]);
    const none = setup([entry('other', 10)], { sessions: 10 });
    await expect(none.place({ sessionId: 's1', exclude: [], open: { userId: 'u' } })).resolves.toBeNull();
  });

  it('leaves a session to the worker queue when no ready context is there (making one would hold the workflow task)', async () => {
    const { place, opened } = setup([entry('here', 0)], { sessions: 0, noneReady: true });
    await expect(place({ sessionId: 's1', exclude: [], open: { userId: 'u' } })).resolves.toEqual({ workerId: 'here', taskQueue: 'browser-here' });
    expect(opened).toEqual([]);
  });

  it('leaves a failed open to the worker queue, which reports the failure', async () => {
    const { place } = setup([entry('here', 0)], { sessions: 0, fails: true });
    await expect(place({ sessionId: 's1', exclude: [], open: { userId: 'u' } })).resolves.toEqual({ workerId: 'here', taskQueue: 'browser-here' });
  });

  it('asks the registry again for a few seconds when no worker has room, and takes the one that has room by then', async () => {
    const entries = [entry('a', 2, 2)];
    const { place } = setup(entries, null);
    setTimeout(() => (entries[0].sessions = 1), 1_200); // a session ended, or a late heartbeat came
    const t0 = Date.now();
    await expect(place({ sessionId: 's1', exclude: [] })).resolves.toEqual({ workerId: 'a', taskQueue: 'browser-a' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_200);
  });

  it('answers none when no worker has room after those seconds, and at once for a session moving from a lost worker', async () => {
    const { place } = setup([entry('a', 2, 2)], null);
    await expect(place({ sessionId: 's1', exclude: [] })).resolves.toBeNull();
    const t0 = Date.now();
    await expect(place({ sessionId: 's2', exclude: ['lost'] })).resolves.toBeNull();
    expect(Date.now() - t0).toBeLessThan(1_000);
  });

  it('without a browser worker in this process (a workflow-only worker) picks from the registry', async () => {
    const { place } = setup([entry('a', 2), entry('b', 1)], null);
    await expect(place({ sessionId: 's1', exclude: [], open: { userId: 'u' } })).resolves.toEqual({ workerId: 'b', taskQueue: 'browser-b' });
  });
});
