import { createLogger } from '../logger';
import { SNAPSHOT_QUIET_MS, SessionSnapshots, snapshotDue } from './snapshots';

/** A session whose page is at `page.url`, changed at `page.changedAt`; the store keeps the saves in the order written. */
function held(options: { slowFirstWrite?: boolean; failingWrites?: number } = {}) {
  const page = { url: 'about:blank', changedAt: Date.now() };
  const saved: string[] = [];
  let writes = 0;
  let failing = options.failingWrites ?? 0;
  const snapshots = new SessionSnapshots({
    pool: { get: () => ({ changedAt: page.changedAt }) as never, snapshot: async () => ({ url: page.url, storageState: '{}' }) },
    store: {
      snapshots: {
        save: async (_id: string, url: string) => {
          if (failing-- > 0) throw new Error('database busy');
          if (options.slowFirstWrite && writes++ === 0) await new Promise((r) => setTimeout(r, 50));
          saved.push(url);
        },
      } as never,
    },
    mask: (_id, text) => text.replace('secret', '***'),
    logger: createLogger('silent'),
  });
  const navigate = (url: string) => Object.assign(page, { url, changedAt: Date.now() });
  return { snapshots, saved, navigate };
}

describe("a held session's saved page", () => {
  it('is saved again only once its pages changed, or after the quiet time', () => {
    expect(snapshotDue(1000, 900, 1100)).toBe(true);
    expect(snapshotDue(800, 900, 1100)).toBe(false);
    expect(snapshotDue(800, 900, 900 + SNAPSHOT_QUIET_MS)).toBe(true);
  });

  it('follows the page: a save asked right after a navigation has the new page, an unchanged one writes nothing', async () => {
    const { snapshots, saved, navigate } = held();
    await snapshots.save('s1');
    navigate('http://site/page?n=7');
    await snapshots.save('s1');
    await snapshots.save('s1');
    expect(saved).toEqual(['about:blank', 'http://site/page?n=7']);
  });

  it('is written one save at a time: an older state never lands after a newer one', async () => {
    const { snapshots, saved, navigate } = held({ slowFirstWrite: true });
    const first = snapshots.save('s1');
    await new Promise((r) => setImmediate(r));
    navigate('http://site/page?n=2');
    await Promise.all([first, snapshots.save('s1')]);
    expect(saved).toEqual(['about:blank', 'http://site/page?n=2']);
  });

  it('is tried again when the database refused it, and stored masked', async () => {
    const { snapshots, saved, navigate } = held({ failingWrites: 1 });
    navigate('http://site/?code=secret');
    await expect(snapshots.save('s1')).resolves.toBeUndefined();
    expect(saved).toEqual([]);
    await snapshots.save('s1');
    expect(saved).toEqual(['http://site/?code=***']);
  });

  it('is saved when a handover asks, due or not; forgotten once the browser closed', async () => {
    const { snapshots, saved } = held();
    await snapshots.save('s1');
    await snapshots.save('s1', true);
    expect(saved).toEqual(['about:blank', 'about:blank']);
    await snapshots.forget('s1');
    await snapshots.save('s1');
    expect(saved).toEqual(['about:blank', 'about:blank', 'about:blank']);
  });
});
