import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Db } from 'mongodb';
import tar from 'tar-stream';
import { createLogger } from '../logger';
import type { BlobStore } from '../contracts/profiles';
import { MemoryReservationLedger, StorageQuota } from '../store/storage-quota';
import { isRegenerable, ProfileDirectories } from './profiles';

async function tarGz(entries: { name: string; content?: string | Buffer }[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const c of pack as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  for (const e of entries) await new Promise<void>((res, rej) => pack.entry({ name: e.name }, e.content ?? '', (err) => (err ? rej(err) : res())));
  pack.finalize();
  await collected;
  return zlib.gzipSync(Buffer.concat(chunks));
}

describe('isRegenerable', () => {
  it.each([
    'Default/Cache',
    'Default/Cache/Cache_Data/data_1',
    'Default/Code Cache/js/index',
    'Default/GPUCache/data_0',
    'Profile 1/Service Worker/CacheStorage/abc/index',
    'Default/Service Worker/ScriptCache/1',
    'Default/DawnCache/data_0',
    'GrShaderCache/data_0',
    'ShaderCache/data_0',
    'Crashpad/reports/x.dmp',
    'BrowserMetrics/BrowserMetrics-1.pma',
    'component_crx_cache/x',
  ])('leaves out %s', (p) => expect(isRegenerable(p)).toBe(true));

  it.each([
    'Default',
    'Default/Cookies',
    'Default/Local Storage/leveldb/000003.log',
    'Default/IndexedDB/http_x_0.indexeddb.leveldb/000003.log',
    'Default/Service Worker/Database/000001.log',
    'Default/Extensions/abc/1.0/Cache/keep.js',
    'Local State',
    'Cache',
  ])('keeps %s', (p) => expect(isRegenerable(p)).toBe(false));
});

describe('ProfileDirectories.materialize', () => {
  let dataDir: string;
  const archives = new Map<string, Buffer>();
  const blobs = { get: async (id: string) => Readable.from([archives.get(id)!]) } as unknown as BlobStore;
  const db = { collection: () => ({ findOne: async () => ({ _id: 'prof_1', userId: 'usr_1', blobId: current }) }) } as unknown as Db;
  let current = '';
  const dirs = () =>
    new ProfileDirectories({
      db,
      blobs,
      quota: new StorageQuota({ usage: { usage: async () => 0 }, ledger: new MemoryReservationLedger(), limitBytes: 1e9 }),
      dataDir,
      maxArchiveBytes: 1e9,
      maxExpandedBytes: 64 * 1024,
      logger: createLogger('silent'),
    });
  const source = { kind: 'profile' as const, id: 'prof_1', userId: 'usr_1' };

  beforeEach(async () => {
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'profiles-test-'));
  });
  afterEach(() => fsp.rm(dataDir, { recursive: true, force: true }));

  it('lays out a valid archive', async () => {
    archives.set('ok', await tarGz([{ name: 'Default/Cookies', content: 'c' }]));
    current = 'ok';
    const dir = await dirs().materialize(source, 'ses_1');
    expect(await fsp.readFile(path.join(dir, 'Default/Cookies'), 'utf8')).toBe('c');
  });

  it('leaves nothing on disk when the archive turns out bad halfway', async () => {
    archives.set('bad', await tarGz([{ name: 'Default/Cookies', content: 'c' }, { name: 'Default/Preferences', content: '{}' }, { name: '../escape', content: 'x' }]));
    current = 'bad';
    await expect(dirs().materialize(source, 'ses_2')).rejects.toMatchObject({ code: 'INVALID_ARCHIVE' });
    expect(await fsp.readdir(path.join(dataDir, 'profiles'))).toEqual([]);
  });

  it('enforces the unpacked-size limit of uploads, and leaves nothing on disk', async () => {
    archives.set('big', await tarGz([{ name: 'Default/a', content: Buffer.alloc(40 * 1024) }, { name: 'Default/b', content: Buffer.alloc(40 * 1024) }]));
    current = 'big';
    await expect(dirs().materialize(source, 'ses_3')).rejects.toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(await fsp.readdir(path.join(dataDir, 'profiles'))).toEqual([]);
  });

  it('stops a decompression bomb hidden outside the entries (zeros after the tar), and leaves nothing on disk', async () => {
    const tarOnly = zlib.gunzipSync(await tarGz([{ name: 'Default/Cookies', content: 'c' }]));
    archives.set('bomb', zlib.gzipSync(Buffer.concat([tarOnly, Buffer.alloc(16 * 1024 * 1024)])));
    current = 'bomb';
    await expect(dirs().materialize(source, 'ses_4')).rejects.toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(await fsp.readdir(path.join(dataDir, 'profiles'))).toEqual([]);
  });
});
