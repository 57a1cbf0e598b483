/**
 * Storage quota, file listing and expiry, upload rate limits, and what a session holds
 * (a slot, a profile lock) when its workflow is gone or its profile is slow to archive back.
 * Each part runs its own service (own Redis database, own workflow queue) with the settings
 * it needs: a small storage quota, a short download life, a sweep every second.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { MongoClient, type Db } from 'mongodb';
import tar from 'tar-stream';
import { isRegenerable } from '../../src/browser/profiles';
import { FilesRepository } from '../../src/store/files.repository';
import { ProfileLocks } from '../../src/store/profile-locks';
import { createStore } from '../../src/store/store';
import { api, waitFor } from '../support/http';
import { allowedPort } from '../support/ports';
import { registerScript } from '../support/scripted-model';
import { createUser, serviceBlobs, serviceEnv, startService, temporalClient, type ServiceProcess } from '../support/service';

const KB = 1024;
const MB = 1024 * KB;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let mongo: MongoClient;
let db: Db;
beforeAll(async () => {
  mongo = new MongoClient(serviceEnv().MONGODB_URL);
  await mongo.connect();
  db = mongo.db();
});
afterAll(() => mongo.close());
const col = (name: string) => db.collection<{ _id: string } & Record<string, any>>(name);

/** A site the agent's browser may reach: downloads, a page that fills the HTTP cache, a page that fills IndexedDB. */
async function startSite() {
  const reports: string[] = [];
  const images = Array.from({ length: 40 }, () => randomBytes(100 * KB));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const size = Number(url.searchParams.get('size') ?? 0);
    switch (url.pathname) {
      case '/download.html':
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Files</title><a href="/data.bin?size=${size}" download="data-${size}.bin">Download data</a>`);
        return;
      case '/data.bin':
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': `attachment; filename="data-${size}.bin"` }).end(randomBytes(size));
        return;
      case '/cache.html': {
        const imgs = images.map((_, i) => `<img src="/img/${i}.png" width="8" height="8">`).join('');
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Gallery</title><p>Gallery</p>${imgs}<script>addEventListener('load', () => fetch('/report?loaded=gallery'))</script>`);
        return;
      }
      case '/fill.html':
        // Random bytes into IndexedDB, 8 MB a record, so the profile is slow to archive back.
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Fill</title><p id="state">filling</p><script>
          const mb = ${size};
          const open = indexedDB.open('bulk', 1);
          open.onupgradeneeded = () => open.result.createObjectStore('chunks');
          open.onsuccess = async () => {
            for (let i = 0; i < mb / 8; i++) {
              const bytes = new Uint8Array(8 * 1024 * 1024);
              for (let o = 0; o < bytes.length; o += 65536) crypto.getRandomValues(bytes.subarray(o, o + 65536));
              await new Promise((resolve, reject) => {
                const tx = open.result.transaction('chunks', 'readwrite');
                tx.objectStore('chunks').put(new Blob([bytes]), i);
                tx.oncomplete = resolve;
                tx.onerror = () => reject(tx.error);
              });
            }
            document.getElementById('state').textContent = 'stored=' + mb;
            fetch('/report?stored=' + mb);
          };
        </script>`);
        return;
      case '/report':
        reports.push(url.search.slice(1));
        res.writeHead(204).end();
        return;
      default:
        if (url.pathname.startsWith('/img/')) {
          res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'public, max-age=86400' }).end(images[Number(url.pathname.slice(5, -4))]);
          return;
        }
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(allowedPort(), '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (p: string) => `${base}${p}`,
    reports,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

type Part = { field: string; filename: string; content: Buffer | AsyncIterable<Buffer> };

async function* multipart(boundary: string, parts: Part[]): AsyncGenerator<Buffer> {
  for (const p of parts) {
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.field}"; filename="${p.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    if (Buffer.isBuffer(p.content)) yield p.content;
    else for await (const c of p.content) yield c;
    yield Buffer.from('\r\n');
  }
  yield Buffer.from(`--${boundary}--\r\n`);
}

/** A multipart upload as a browser sends it, streamed. */
async function upload(base: string, path: string, key: string, parts: Part[], headers: Record<string, string> = {}) {
  const boundary = `----e2e${randomBytes(8).toString('hex')}`;
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, ...headers },
    body: multipart(boundary, parts) as any,
    duplex: 'half',
  } as RequestInit);
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* kept as text */
  }
  return { status: res.status, headers: res.headers, body };
}

/** An async iterable that yields `head`, waits for `release`, then yields `tail`. */
function gated(head: Buffer, tail: Buffer) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return {
    release,
    body: (async function* () {
      yield head;
      await gate;
      yield tail;
    })(),
  };
}

async function tarGz(entries: { name: string; content: string }[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const c of pack as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  for (const e of entries) await new Promise<void>((res, rej) => pack.entry({ name: e.name }, e.content, (err) => (err ? rej(err) : res())));
  pack.finalize();
  await collected;
  return zlib.gzipSync(Buffer.concat(chunks));
}

async function tarNames(gz: Buffer): Promise<string[]> {
  const names: string[] = [];
  const extract = tar.extract();
  const done = (async () => {
    for await (const entry of extract) {
      names.push(entry.header.name);
      entry.resume();
    }
  })();
  extract.end(zlib.gunzipSync(gz));
  await done;
  return names;
}

/** A service of its own: its own Redis database and workflow queue, so only its worker takes its sessions. */
function ownService(redisDb: number, name: string, extra: Record<string, string>): Promise<ServiceProcess> {
  return startService({
    REDIS_URL: `${serviceEnv().REDIS_URL}/${redisDb}`,
    TEMPORAL_TASK_QUEUE: `${process.env.TEST_TASK_QUEUE ?? 'sessions'}-${name}`,
    INLINE_WAIT_MS: '25000',
    NAVIGATION_TIMEOUT_MS: '4000',
    ...extra,
  });
}

/** The task's end: the inline answer, or by polling when the machine is too busy for the inline wait. */
async function outcome(base: string, res: { body: any }): Promise<any> {
  if (res.body.status !== 'pending') return res.body;
  return waitFor(async () => {
    const r = await api(base, 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`);
    return ['task_completed', 'failed'].includes(r.body.status) ? r.body : null;
  }, 60_000);
}

describe('storage: quota, listing, expiry, rate limits', () => {
  let service: ServiceProcess;
  let site: Awaited<ReturnType<typeof startSite>>;
  const base = () => service.baseUrl;
  const QUOTA = 4 * MB;
  const DOWNLOAD_TTL_MS = 12_000;

  beforeAll(async () => {
    site = await startSite();
    service = await ownService(1, 'storage', { USER_STORAGE_MAX_BYTES: String(QUOTA), DOWNLOAD_TTL_MS: String(DOWNLOAD_TTL_MS), UPLOAD_RATE_LIMIT_PER_MINUTE: '5' });
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await site?.close();
  });

  const download = async (key: string, size: number) => {
    const t = token('download');
    await registerScript(model(), { match: t, steps: [{ tool: 'click_element', args: { index: { ref: 'Download data' } } }, { tool: 'wait', args: { seconds: 1 } }, { tool: 'done', args: { message: 'downloaded' } }] });
    const res = await api(base(), 'POST', '/start/run-task', { key, body: { task: { prompt: `${t} get the data`, startingUrl: site.url(`/download.html?size=${size}`) } } });
    return outcome(base(), res);
  };
  const listFiles = async (key: string) => (await api(base(), 'GET', '/files', { key })).body;

  it("counts the agent's downloads against the owner's quota; lists and deletes them; they expire", async () => {
    const { userId, apiKey: key } = await createUser();
    const other = await createUser();

    // nearly full: a download that does not fit is not stored
    const filler = await upload(base(), '/files/upload', key, [{ field: 'files', filename: 'filler.bin', content: randomBytes(QUOTA - 300 * KB) }]);
    expect(filler.status).toBe(200);
    const refused = await download(key, 600 * KB);
    expect(refused).toMatchObject({ type: 'task_completed', data: { files: [] } });
    const onlyFiller = await listFiles(key);
    expect(onlyFiller).toEqual({
      success: true,
      files: [{ fileId: filler.body.files[0].fileId, originalName: 'filler.bin', size: QUOTA - 300 * KB, contentType: 'application/octet-stream', source: 'upload', createdAt: expect.any(String), expiresAt: expect.any(String) }],
      nextCursor: null,
    });

    // room made: the download is stored and listed as the owner's, with its life
    expect(await api(base(), 'DELETE', `/files/${filler.body.files[0].fileId}`, { key })).toMatchObject({ status: 200, body: { success: true, message: 'File deleted' } });
    const done = await download(key, 600 * KB);
    expect(done.data.files).toEqual([{ source: site.url('/data.bin?size=614400'), filename: 'data-614400.bin', downloadUrl: expect.any(String), timestamp: expect.any(Number) }]);
    const listed = await listFiles(key);
    expect(listed.files).toEqual([
      {
        fileId: expect.any(String),
        originalName: 'data-614400.bin',
        size: 600 * KB,
        contentType: 'application/octet-stream',
        source: 'download',
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
        sessionId: done.sessionId,
        taskId: done.taskId,
        sourceUrl: site.url('/data.bin?size=614400'),
      },
    ]);
    const file = listed.files[0];
    expect(Date.parse(file.expiresAt) - Date.parse(file.createdAt)).toBe(DOWNLOAD_TTL_MS);

    // it counts: what no longer fits beside it is refused
    const over = await upload(base(), '/files/upload', key, [{ field: 'files', filename: 'big.bin', content: randomBytes(QUOTA - 300 * KB) }]);
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ success: false, code: 'STORAGE_QUOTA_EXCEEDED' });

    // another user neither sees nor deletes it
    expect((await listFiles(other.apiKey)).files).toEqual([]);
    expect(await api(base(), 'DELETE', `/files/${file.fileId}`, { key: other.apiKey })).toMatchObject({ status: 404, body: { success: false, code: 'FILE_NOT_FOUND', message: 'File not found' } });
    expect(await api(base(), 'DELETE', '/files/file_unknown', { key })).toMatchObject({ status: 404, body: { message: 'File not found' } });

    // past its life it is gone for the user at once, and the sweep removes its blob
    const gone = await waitFor(async () => ((await listFiles(key)).files.length === 0 ? true : null), DOWNLOAD_TTL_MS + 15_000, 500);
    expect(gone).toBe(true);
    expect((await fetch(done.data.files[0].downloadUrl)).status).toBe(404);
    // the sweep the service runs every minute, run now (until the task's step pictures, made
    // just after the download and living as long, have expired too)
    const swept = await waitFor(async () => {
      await new FilesRepository(db, serviceBlobs(db)).sweepExpired();
      return (await col('files').countDocuments({ userId })) === 0 ? true : null;
    }, DOWNLOAD_TTL_MS + 15_000, 500);
    expect(swept).toBe(true);
    expect(await col('blobs.files').countDocuments({ 'metadata.userId': userId })).toBe(0);
  });

  it('never lets parallel uploads add up past the quota', async () => {
    const { userId, apiKey: key } = await createUser();
    const size = 900 * KB;
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => upload(base(), '/files/upload', key, [{ field: 'files', filename: `part-${i}.bin`, content: randomBytes(size) }])));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    console.log(`8 parallel uploads of 900 KB against a 4 MB quota: ${ok.length} stored, ${refused.length} refused`);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.length * size).toBeLessThanOrEqual(QUOTA);
    for (const r of refused) expect({ status: r.status, code: r.body.code }).toEqual({ status: 413, code: 'STORAGE_QUOTA_EXCEEDED' });
    // what the user sees and what is stored agree, and nothing stays reserved
    const listed = (await listFiles(key)).files;
    expect(listed).toHaveLength(ok.length);
    const stored = await col('blobs.files').find({ 'metadata.userId': userId }).toArray();
    expect(stored.reduce((n, b) => n + b.length, 0)).toBe(ok.length * size);
    expect(await col('storageReservations').countDocuments({ userId })).toBe(0);
  });

  it('rate limits the upload endpoints per user', async () => {
    const { apiKey: key } = await createUser();
    const other = await createUser();
    const xff = { 'x-forwarded-for': `10.88.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` };
    const env = (await api(base(), 'POST', '/environments', { key, body: { name: 'uploads' } })).body.environment;
    const profile = (await api(base(), 'POST', '/profiles', { key, body: { name: 'uploads' }, headers: xff })).body.profile;
    const archive = await tarGz([{ name: 'Default/Preferences', content: '{}' }]);
    // environment files, environment archives and profile archives share UPLOAD_RATE_LIMIT_PER_MINUTE (5 here)
    const statuses = [
      (await upload(base(), `/environments/${env._id}/files`, key, [{ field: 'files', filename: 'a.txt', content: Buffer.from('a') }])).status,
      (await upload(base(), `/environments/${env._id}/upload`, key, [{ field: 'file', filename: 'p.tar.gz', content: archive }])).status,
      (await upload(base(), `/profiles/${profile._id}/upload`, key, [{ field: 'file', filename: 'p.tar.gz', content: archive }], xff)).status,
      (await upload(base(), `/environments/${env._id}/files`, key, [{ field: 'files', filename: 'b.txt', content: Buffer.from('b') }])).status,
      (await upload(base(), `/environments/${env._id}/upload`, key, [{ field: 'file', filename: 'p.tar.gz', content: archive }])).status,
    ];
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const limited = await upload(base(), `/profiles/${profile._id}/upload`, key, [{ field: 'file', filename: 'p.tar.gz', content: archive }], xff);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ success: false, code: 'RATE_LIMIT_EXCEEDED' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await upload(base(), `/environments/${env._id}/files`, key, [{ field: 'files', filename: 'c.txt', content: Buffer.from('c') }])).status).toBe(429);
    // another user is not affected
    const theirs = (await api(base(), 'POST', '/environments', { key: other.apiKey, body: { name: 'mine' } })).body.environment;
    expect((await upload(base(), `/environments/${theirs._id}/files`, other.apiKey, [{ field: 'files', filename: 'a.txt', content: Buffer.from('a') }])).status).toBe(200);

    // POST /files/upload is in the contract's 10 per minute per user
    const files = [];
    for (let i = 0; i < 11; i++) files.push((await upload(base(), '/files/upload', key, [{ field: 'files', filename: `${i}.txt`, content: Buffer.from('x') }])).status);
    expect(files).toEqual([...Array(10).fill(200), 429]);
  });
});

describe('session slots and profile locks', () => {
  let service: ServiceProcess;
  let site: Awaited<ReturnType<typeof startSite>>;
  let temporal: Awaited<ReturnType<typeof temporalClient>>;
  const base = () => service.baseUrl;
  const SWEEP_MS = 1000;
  /** How long the worker keeps the browser of a session whose workflow is gone for a run that continued it (none does here). */
  const LEASE_HANDOVER_MS = 3000;

  beforeAll(async () => {
    site = await startSite();
    temporal = await temporalClient();
    service = await ownService(2, 'locks', { SESSION_SWEEP_INTERVAL_MS: String(SWEEP_MS), RATE_LIMIT_PER_MINUTE: '600', LEASE_HANDOVER_MS: String(LEASE_HANDOVER_MS) });
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await temporal?.close();
    await site?.close();
  });

  const xff = () => ({ 'x-forwarded-for': `10.99.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` });
  const start = (key: string, body: Record<string, unknown>) => api(base(), 'POST', '/start/start-session', { key, body });
  const terminate = (key: string, sessionId: string) => api(base(), 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'state', newState: 'terminate' } } });
  const sessionsOpen = async () => (await api(base(), 'GET', '/start/health')).body.sessionsOpen as number;
  const profileRecord = (id: string) => col('profiles').findOne({ _id: id });

  it('frees the slot and the profile lock of a session whose workflow was terminated from outside', async () => {
    const { apiKey: key } = await createUser({ sessionLimit: 1 });
    const headers = xff();
    const profile = (await api(base(), 'POST', '/profiles', { key, body: { name: 'killed' }, headers })).body.profile;
    const first = await start(key, { profileId: profile._id });
    expect(first.status).toBe(200);
    expect(await start(key, {})).toMatchObject({ status: 429, body: { code: 'SESSION_LIMIT_REACHED' } });
    const archive = await tarGz([{ name: 'Default/Preferences', content: '{}' }]);
    expect(await upload(base(), `/profiles/${profile._id}/upload`, key, [{ field: 'file', filename: 'p.tar.gz', content: archive }], headers)).toMatchObject({ status: 409, body: { code: 'PROFILE_IN_USE' } });
    await waitFor(async () => (await sessionsOpen()) === 1, 15_000);

    // as an operator would from the Temporal UI
    await temporal.client.workflow.getHandle(`session-${first.body.sessionId}`).terminate('terminated from the Temporal UI');
    const killedAt = Date.now();
    const freed = await waitFor(async () => {
      const rec = await col('sessions').findOne({ _id: first.body.sessionId });
      const lock = await col('profileLocks').findOne({ _id: `profile:${profile._id}` });
      const user = await col('users').findOne({ _id: rec?.userId });
      return rec?.holdsSlot === false && !lock && user?.activeSessions === 0 ? Date.now() : null;
    }, 30_000, 50);
    console.log(`slot and profile lock of a terminated workflow freed ${freed - killedAt} ms after the terminate (sweep every ${SWEEP_MS} ms)`);
    // a new session on the profile starts at once
    const second = await start(key, { profileId: profile._id });
    expect(second.status).toBe(200);
    expect((await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: first.body.sessionId, message: { actionType: 'state', newState: 'stop' } } })).status).toBe(404);
    expect(await col('sessions').findOne({ _id: first.body.sessionId })).toMatchObject({ status: 'terminated', endReason: 'terminated', holdsSlot: false });
    // the worker closed the killed session's browser: only the new one is open (the lease hears
    // of the terminate at its next beat, every 3 s, then gives a continued run LEASE_HANDOVER_MS to take over)
    await waitFor(async () => (await sessionsOpen()) === 1 && (await col('sessions').countDocuments({ _id: second.body.sessionId, status: 'active' })) === 1, 30_000);
    await terminate(key, second.body.sessionId);
    await waitFor(async () => (await profileRecord(profile._id))?.lockedBy === null && (await sessionsOpen()) === 0, 30_000);
  });

  it('keeps a profile upload and a live session on the same profile apart, both ways', async () => {
    const { apiKey: key } = await createUser({ sessionLimit: 3 });
    const headers = xff();
    const profile = (await api(base(), 'POST', '/profiles', { key, body: { name: 'contested' }, headers })).body.profile;
    const archive = await tarGz([{ name: 'Default/Preferences', content: '{"a":1}' }, { name: 'Local State', content: '{}' }]);

    // an upload streaming in: no session on the profile
    const slow = gated(archive.subarray(0, 40), archive.subarray(40));
    const pending = upload(base(), `/profiles/${profile._id}/upload`, key, [{ field: 'file', filename: 'p.tar.gz', content: slow.body }], headers);
    await waitFor(async () => (await profileRecord(profile._id))?.status === 'uploading', 10_000, 50);
    const during = await start(key, { profileId: profile._id });
    expect(during).toMatchObject({ status: 409, body: { success: false, code: 'PROFILE_IN_USE', message: expect.stringMatching(/being uploaded/) } });
    slow.release();
    expect((await pending).status).toBe(200);

    // a live session: no upload to its profile
    const s = await start(key, { profileId: profile._id });
    expect(s.status).toBe(200);
    const refused = await upload(base(), `/profiles/${profile._id}/upload`, key, [{ field: 'file', filename: 'p.tar.gz', content: archive }], headers);
    expect(refused).toMatchObject({ status: 409, body: { success: false, code: 'PROFILE_IN_USE' } });
    expect((await profileRecord(profile._id))?.status).toBe('ready');
    await terminate(key, s.body.sessionId);
    await waitFor(async () => (await profileRecord(profile._id))?.usageCount === 1 && (await profileRecord(profile._id))?.lockedBy === null, 30_000);
    expect((await upload(base(), `/profiles/${profile._id}/upload`, key, [{ field: 'file', filename: 'p.tar.gz', content: archive }], headers)).status).toBe(200);
  });

  it("archives a profile back without Chromium's caches", async () => {
    const { apiKey: key } = await createUser();
    const headers = xff();
    const profile = (await api(base(), 'POST', '/profiles', { key, body: { name: 'gallery' }, headers })).body.profile;
    const s = await start(key, { profileId: profile._id });
    expect(s.status).toBe(200);
    const t = token('gallery');
    await registerScript(model(), { match: t, steps: [{ tool: 'wait', args: { seconds: 1 } }, { tool: 'done', args: { message: '{{find:(Gallery)}}' } }] });
    const res = await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: s.body.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${t} look`, startingUrl: site.url('/cache.html') } } });
    expect((await outcome(base(), res)).data.message).toBe('Gallery');
    // the page loaded its 40 images of 100 KB, each cacheable for a day
    await waitFor(async () => site.reports.includes('loaded=gallery'), 15_000);
    await terminate(key, s.body.sessionId);
    const rec = await waitFor(async () => {
      const r = await profileRecord(profile._id);
      return r?.blobId && r.lockedBy === null ? r : null;
    }, 60_000);

    const dl = await fetch(`${base()}/profiles/${profile._id}/download`, { headers: { authorization: `Bearer ${key}`, ...headers } });
    expect(dl.status).toBe(200);
    const names = (await tarNames(Buffer.from(await dl.arrayBuffer()))).map((n) => n.replace(/\/$/, ''));
    console.log(`profile archived back after a page of 4 MB of cacheable images: ${(rec.blobSize / 1024).toFixed(0)} KB, ${names.length} entries`);
    expect(names).toEqual(expect.arrayContaining(['Default', 'Default/Preferences', 'Local State']));
    expect(names.filter((n) => isRegenerable(n))).toEqual([]);
    expect(names.filter((n) => /(^|\/)(Cache|Code Cache|GPUCache)(\/|$)/.test(n))).toEqual([]);
  });

  it('keeps the profile locked until a slow archive-back is stored, even when the workflow is terminated meanwhile', async () => {
    // Room for a second session: a start refused while the first one ends is refused for its profile, not its slot.
    const { apiKey: key } = await createUser({ sessionLimit: 2 });
    const headers = xff();
    const profile = (await api(base(), 'POST', '/profiles', { key, body: { name: 'bulky' }, headers })).body.profile;
    const s = await start(key, { profileId: profile._id });
    expect(s.status).toBe(200);
    const t = token('bulky');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'opened' } }] });
    const mb = 32;
    await outcome(base(), await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: s.body.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${t} open`, startingUrl: site.url(`/fill.html?size=${mb}`) } } }));
    // the page stored 32 MB of random bytes in IndexedDB
    await waitFor(async () => site.reports.includes(`stored=${mb}`), 90_000, 250);

    // A terminate answers once the session has ended (up to 10 s): not awaited here, so the
    // workflow can be killed while the archive-back runs.
    const ending = terminate(key, s.body.sessionId);
    const lockId = `profile:${profile._id}`;
    await waitFor(async () => (await col('profileLocks').findOne({ _id: lockId }))?.archivingAt instanceof Date, 60_000, 50);
    // the archive-back is running on the worker; the workflow is killed meanwhile
    await temporal.client.workflow.getHandle(`session-${s.body.sessionId}`).terminate('terminated while archiving');

    // The workflow is gone, but not the profile's lock: a session on it would read the old
    // archive. Tried at once (waited for the session's end first, the archive was stored
    // before the first try, on a loaded machine).
    let refusals = 0;
    const archivingSince = Date.now();
    for (;;) {
      const before = await profileRecord(profile._id);
      if (before?.blobId) break;
      const r = await start(key, { profileId: profile._id });
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 409, code: 'PROFILE_IN_USE' });
      refusals++;
      await sleep(300);
    }
    console.log(`archive-back of an ${mb} MB profile: locked for ${Date.now() - archivingSince} ms after its workflow was terminated, ${refusals} sessions refused meanwhile`);
    expect(refusals).toBeGreaterThanOrEqual(1);
    await ending;
    await waitFor(async () => (await col('sessions').findOne({ _id: s.body.sessionId }))?.holdsSlot === false, 30_000, 100);
    const stored = await profileRecord(profile._id);
    expect(stored!.blobSize).toBeGreaterThan(mb * MB * 0.9);
    const next = await waitFor(async () => {
      const r = await start(key, { profileId: profile._id });
      return r.status === 200 ? r : null;
    }, 30_000, 250);
    await terminate(key, next.body.sessionId);
    await waitFor(async () => (await profileRecord(profile._id))?.lockedBy === null && (await sessionsOpen()) === 0, 120_000);
  }, 300_000);
});

describe('under concurrency', () => {
  it('never lets an upload and a session both take a profile, however they interleave', async () => {
    const store = createStore(db);
    const locks = new ProfileLocks(db);
    const user = await store.users.create(`race-${Date.now()}@example.com`, 10, 3);
    const profile = (await store.profiles.create(user._id, { name: 'raced' }, 20))!;
    const source = { kind: 'profile' as const, id: profile._id, userId: user._id };
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 30; round++) {
      const [session, up] = await Promise.all([locks.acquire(source, `ses_race_${round}`), store.profiles.beginUpload(profile._id, user._id)]);
      const both = session === 'ok' && up.ok;
      outcomes.set(`${session}/${up.ok ? 'ok' : up.reason}`, (outcomes.get(`${session}/${up.ok ? 'ok' : up.reason}`) ?? 0) + 1);
      expect(both).toBe(false);
      if (session === 'ok') await locks.release(source, `ses_race_${round}`);
      if (up.ok) await store.profiles.abortUpload(profile._id, up.uploadId);
    }
    console.log(`30 rounds of a session and an upload started together: ${[...outcomes].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
    // with nothing in the way, each still works
    expect(await locks.acquire(source, 'ses_alone')).toBe('ok');
    await locks.release(source, 'ses_alone');
    const alone = await store.profiles.beginUpload(profile._id, user._id);
    expect(alone.ok).toBe(true);
  });
});
