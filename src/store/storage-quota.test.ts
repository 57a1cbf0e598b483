import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MemoryReservationLedger, StorageQuota } from './storage-quota';

const KB = 1024;
const sink = async (s: AsyncIterable<Buffer>) => {
  let n = 0;
  for await (const c of s) n += c.length;
  return n;
};

describe('StorageQuota', () => {
  let used: number;
  let ledger: MemoryReservationLedger;
  let quota: StorageQuota;
  beforeEach(() => {
    used = 0;
    ledger = new MemoryReservationLedger();
    quota = new StorageQuota({ usage: { usage: async () => used }, ledger, limitBytes: 1024 * KB });
  });

  it('refuses a new blob when nothing is left, before any byte is read', async () => {
    used = 1024 * KB;
    await expect(quota.reserve('u', { perFile: 64 * KB })).rejects.toMatchObject({ status: 413, code: 'STORAGE_QUOTA_EXCEEDED', details: { limit: 1024 * KB } });
    // what the blob replaces counts as free
    await expect(quota.reserve('u', { perFile: 64 * KB, freedOnSuccess: 10 * KB })).resolves.toMatchObject({ granted: 10 * KB });
  });

  it('grows a reservation as bytes pass, and stops the stream when the quota has no more', async () => {
    used = 700 * KB;
    const r = await quota.reserve('u', { perFile: 1024 * KB });
    expect(r.granted).toBe(256 * KB);
    const chunks = Array.from({ length: 40 }, () => Buffer.alloc(10 * KB));
    const err = await pipeline(Readable.from(chunks), r.meter(() => new Error('over quota')), async (s) => sink(s)).catch((e) => e);
    expect(err).toEqual(new Error('over quota'));
    expect(r.granted).toBeLessThanOrEqual(324 * KB);
    await r.release();
    expect(ledger.reservations.size).toBe(0);
  });

  it('counts every other reservation of the user, not those of others', async () => {
    const a = await quota.reserve('u', { perFile: 1024 * KB });
    const b = await quota.reserve('u', { perFile: 1024 * KB });
    const c = await quota.reserve('u', { perFile: 1024 * KB });
    const d = await quota.reserve('u', { perFile: 1024 * KB });
    expect([a, b, c, d].reduce((n, r) => n + r.granted, 0)).toBe(1024 * KB);
    await expect(quota.reserve('u', { perFile: 1024 * KB })).rejects.toMatchObject({ code: 'STORAGE_QUOTA_EXCEEDED' });
    await expect(quota.reserve('someone-else', { perFile: 1024 * KB })).resolves.toMatchObject({ granted: 256 * KB });
    await a.release();
    await expect(quota.reserve('u', { perFile: 1024 * KB })).resolves.toMatchObject({ granted: 256 * KB });
  });
});
