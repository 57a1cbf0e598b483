import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fsp, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { MongoClient, type Db } from 'mongodb';
import tar from 'tar-stream';
import { loadConfig } from '../../src/config';
import { openChatConnection } from '../../src/environments/chat-connection';
import { linkSecret } from '../../src/files/links';
import { signFileLink } from '../../src/contracts/link-tokens';
import { EnvironmentsRepository } from '../../src/store/environments.repository';
import { FilesRepository, runStorageSweep, sweepOrphanBlobs } from '../../src/store/files.repository';
import { ProfilesRepository } from '../../src/store/profiles.repository';
import { api, waitFor } from '../support/http';
import { createUser, serviceBlobs, serviceEnv, startService, type ServiceProcess } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const MB = 1024 * 1024;

type Part = { field: string; filename?: string; type?: string; content: Buffer | string | AsyncIterable<Buffer> };

/** A multipart body streamed part by part, as a browser or curl would send it. */
async function* multipart(boundary: string, parts: Part[]): AsyncGenerator<Buffer> {
  for (const p of parts) {
    const disposition = p.filename !== undefined ? `form-data; name="${p.field}"; filename="${p.filename}"` : `form-data; name="${p.field}"`;
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.filename !== undefined ? `Content-Type: ${p.type ?? 'application/octet-stream'}\r\n` : ''}\r\n`);
    if (typeof p.content === 'string' || Buffer.isBuffer(p.content)) yield Buffer.from(p.content);
    else for await (const c of p.content) yield c;
    yield Buffer.from('\r\n');
  }
  yield Buffer.from(`--${boundary}--\r\n`);
}

async function send(method: string, urlPath: string, opts: { key?: string; parts?: Part[]; headers?: Record<string, string>; signal?: AbortSignal; raw?: boolean } = {}) {
  const boundary = `----e2e${randomBytes(8).toString('hex')}`;
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: any;
  if (opts.parts) {
    headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
    body = multipart(boundary, opts.parts);
  }
  const res = await fetch(`${base()}${urlPath}`, { method, headers, body, signal: opts.signal, duplex: 'half' } as RequestInit);
  const buf = Buffer.from(await res.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(buf.toString('utf8'));
  } catch {
    /* a download */
  }
  return { status: res.status, headers: res.headers, body: json, bytes: buf };
}

type Entry = Partial<tar.Header> & { name: string; content?: string | Buffer };

async function tarGz(entries: Entry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const c of pack as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  for (const { content, ...header } of entries) await new Promise<void>((resolve, reject) => pack.entry(header, content ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve())));
  pack.finalize();
  await collected;
  return zlib.gzipSync(Buffer.concat(chunks));
}

const profileArchive = (marker: string) =>
  tarGz([
    { name: 'Default/', type: 'directory' },
    { name: 'Default/Cookies', content: `cookies-${marker}` },
    { name: 'Default/Local Storage/leveldb/000003.log', content: randomBytes(20_000) },
    { name: 'Local State', content: '{}' },
  ]);

const archivePart = (content: Buffer | AsyncIterable<Buffer>, filename = 'profile.tar.gz'): Part => ({ field: 'file', filename, type: 'application/gzip', content });

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

let mongo: MongoClient;
let db: Db;
beforeAll(async () => {
  mongo = new MongoClient(serviceEnv().MONGODB_URL);
  await mongo.connect();
  db = mongo.db();
});
afterAll(async () => {
  await mongo.close();
});
const col = (name: string) => db.collection<{ _id: string } & Record<string, any>>(name);

const envsOf = async (key: string) => (await api(base(), 'GET', '/environments', { key })).body.environments as any[];
const envById = async (key: string, id: string) => (await envsOf(key)).find((e) => e._id === id);

describe('environments', () => {
  it('creates, lists and deletes with the contract messages', async () => {
    const { userId, apiKey: key } = await createUser();
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: null, description: 'x' }]) {
      const r = await api(base(), 'POST', '/environments', { key, body });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ success: false, message: 'Environment name is required' });
    }
    const long = await api(base(), 'POST', '/environments', { key, body: { name: 'n'.repeat(101) } });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'name' } });

    const created = await api(base(), 'POST', '/environments', { key, body: { name: ' Work ', description: 'logged in to the CRM' } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      success: true,
      message: expect.any(String),
      environment: { _id: expect.stringMatching(/^env_/), userId, name: 'Work', description: 'logged in to the CRM', status: 'empty', createdAt: expect.any(String), updatedAt: expect.any(String) },
    });
    const id = created.body.environment._id;
    expect(new Date(created.body.environment.createdAt).getTime()).toBeGreaterThan(Date.now() - 60_000);

    const list = await api(base(), 'GET', '/environments', { key });
    expect(list.body).toMatchObject({ success: true, environments: [{ _id: id, userId, name: 'Work', status: 'empty', blobSize: null, blobUploadedAt: null, chat: null }] });

    expect((await api(base(), 'GET', '/environments')).body).toMatchObject({ success: false, message: 'API key required' });
    const unknown = await api(base(), 'DELETE', '/environments/env_nope', { key });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, message: 'Environment not found' });

    const del = await api(base(), 'DELETE', `/environments/${id}`, { key });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, message: expect.any(String) });
    expect((await api(base(), 'DELETE', `/environments/${id}`, { key })).status).toBe(404);
    expect(await envsOf(key)).toEqual([]);
  });

  it('allows 20 environments per user', async () => {
    const { apiKey: key } = await createUser();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await api(base(), 'POST', '/environments', { key, body: { name: `env ${i}` } });
      expect(r.status).toBe(200);
      ids.push(r.body.environment._id);
    }
    const over = await api(base(), 'POST', '/environments', { key, body: { name: 'one too many' } });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ success: false, message: 'Maximum of 20 environments allowed' });
    // another user is not affected, and deleting one frees a place
    const { apiKey: other } = await createUser();
    expect((await api(base(), 'POST', '/environments', { key: other, body: { name: 'mine' } })).status).toBe(200);
    await api(base(), 'DELETE', `/environments/${ids[0]}`, { key });
    expect((await api(base(), 'POST', '/environments', { key, body: { name: 'again' } })).status).toBe(200);

    // 30 creates at once: exactly 20 get through
    const { apiKey: racer } = await createUser();
    const raced = await Promise.all(Array.from({ length: 30 }, (_, i) => api(base(), 'POST', '/environments', { key: racer, body: { name: `r${i}` } })));
    expect(raced.filter((r) => r.status === 200)).toHaveLength(20);
    expect(raced.filter((r) => r.status === 400).every((r) => r.body.message === 'Maximum of 20 environments allowed')).toBe(true);
    expect(await envsOf(racer)).toHaveLength(20);
  });

  it('takes a profile archive: ready with blobSize and blobUploadedAt; invalid ones are 400 and change nothing', async () => {
    const { apiKey: key } = await createUser();
    const id = (await api(base(), 'POST', '/environments', { key, body: { name: 'profile' } })).body.environment._id;

    const noFile = await send('POST', `/environments/${id}/upload`, { key, parts: [{ field: 'note', content: 'no file here' }] });
    expect(noFile.status).toBe(400);
    // a part in another field than the archive's is refused naming it
    expect(noFile.body).toMatchObject({ success: false, code: 'INVALID_PARAMETER', message: 'Unknown form field "note": the files go in the field "file"' });
    const json = await api(base(), 'POST', `/environments/${id}/upload`, { key, body: { file: 'x' } });
    expect(json.body).toMatchObject({ success: false, message: 'No file provided' });
    const zip = await send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(Buffer.from('PK\x03\x04'), 'profile.zip')] });
    expect(zip.status).toBe(400);
    expect(zip.body).toMatchObject({ success: false, message: 'Only .tar.gz files are allowed' });
    const missing = await send('POST', '/environments/env_nope/upload', { key, parts: [archivePart(await profileArchive('x'))] });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ success: false, message: 'Environment not found' });

    // invalid on an empty environment: still empty
    const garbage = await send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(randomBytes(300_000))] });
    expect(garbage.status).toBe(400);
    expect(garbage.body).toMatchObject({ success: false, code: 'INVALID_ARCHIVE', message: expect.stringMatching(/gzip/) });
    expect(await envById(key, id)).toMatchObject({ status: 'empty', blobSize: null, blobUploadedAt: null });

    const good = await profileArchive('first');
    const up = await send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(good)] });
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ success: true, message: expect.any(String), environment: { _id: id, name: 'profile', status: 'ready', blobSize: good.length, blobUploadedAt: expect.any(String) } });
    const ready = await envById(key, id);
    expect(ready).toMatchObject({ status: 'ready', blobSize: good.length, blobUploadedAt: up.body.environment.blobUploadedAt });

    const refused: [string, Buffer, RegExp][] = [
      ['not gzip', Buffer.from('just some text, not an archive'), /not gzip/],
      ['gzip, not tar', zlib.gzipSync(Buffer.from('hello, not a tar')), /not a tar/],
      ['path escaping', await tarGz([{ name: 'ok', content: 'x' }, { name: '../../etc/cron.d/evil', content: '* * * * * root sh' }]), /escapes the archive root/],
      ['absolute path', await tarGz([{ name: '/etc/passwd', content: 'x' }]), /absolute path/],
      ['symlink escaping', await tarGz([{ name: 'Default/', type: 'directory' }, { name: 'Default/Cookies', type: 'symlink', linkname: '../../../../root/.ssh/id_rsa' }]), /points outside/],
      ['symlink absolute', await tarGz([{ name: 'link', type: 'symlink', linkname: '/etc/shadow' }]), /points outside/],
    ];
    for (const [what, body, message] of refused) {
      const r = await send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(body)] });
      expect({ what, status: r.status }).toEqual({ what, status: 400 });
      expect(r.body).toMatchObject({ success: false, code: 'INVALID_ARCHIVE', message: expect.stringMatching(message) });
      expect(await envById(key, id)).toMatchObject({ status: 'ready', blobSize: good.length, blobUploadedAt: up.body.environment.blobUploadedAt });
    }
    // the refused blobs are gone; only the good archive is stored
    const blobs = await col('blobs.files').find({ 'metadata.userId': ready.userId }).toArray();
    expect(blobs.map((b) => b.length)).toEqual([good.length]);

    // a second good archive replaces the first
    const second = await profileArchive('second');
    const up2 = await send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(second, 'again.tgz')] });
    expect(up2.body.environment).toMatchObject({ status: 'ready', blobSize: second.length });
    expect((await col('blobs.files').find({ 'metadata.userId': ready.userId }).toArray()).map((b) => b.length)).toEqual([second.length]);

    // deleting the environment deletes its profile data
    await api(base(), 'DELETE', `/environments/${id}`, { key });
    expect(await col('blobs.files').countDocuments({ 'metadata.userId': ready.userId })).toBe(0);
  });

  it('is uploading while the archive streams; a second upload waits its turn; an interrupted one restores the previous state', async () => {
    const { apiKey: key } = await createUser();
    const id = (await api(base(), 'POST', '/environments', { key, body: { name: 'slow' } })).body.environment._id;
    const first = await profileArchive('first');
    await send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(first)] });
    const before = await envById(key, id);

    const next = await profileArchive('next');
    const slow = gated(next.subarray(0, 1000), next.subarray(1000));
    const pending = send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(slow.body)] });
    await waitFor(async () => (await envById(key, id)).status === 'uploading', 10_000, 50);
    const busy = await send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(first)] });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ success: false, code: 'UPLOAD_IN_PROGRESS' });
    // several at once while one streams: all refused
    const more = await Promise.all([1, 2, 3].map(() => send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(first)] })));
    expect(more.map((r) => r.status)).toEqual([409, 409, 409]);
    slow.release();
    const done = await pending;
    expect(done.status).toBe(200);
    expect(await envById(key, id)).toMatchObject({ status: 'ready', blobSize: next.length });

    // the client goes away mid-upload: status and archive as they were
    const after = await envById(key, id);
    const abort = new AbortController();
    const cut = gated(first.subarray(0, 1000), first.subarray(1000));
    const aborted = send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(cut.body)], signal: abort.signal }).catch((e) => e);
    await waitFor(async () => (await envById(key, id)).status === 'uploading', 10_000, 50);
    abort.abort();
    await aborted;
    await waitFor(async () => (await envById(key, id)).status === 'ready', 10_000, 50);
    expect(await envById(key, id)).toMatchObject({ status: 'ready', blobSize: after.blobSize, blobUploadedAt: after.blobUploadedAt });
    expect(before.blobSize).toBe(first.length);
    await waitFor(async () => (await col('blobs.files').countDocuments({ 'metadata.userId': after.userId })) === 1, 5_000, 100);

    // a live session holds the profile: no upload until it ends
    await col('environments').updateOne({ _id: id }, { $set: { lockedBy: 'session-x' } });
    const inUse = await send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(first)] });
    expect(inUse.status).toBe(409);
    expect(inUse.body).toMatchObject({ success: false, code: 'PROFILE_IN_USE' });
    await col('environments').updateOne({ _id: id }, { $set: { lockedBy: null } });

    // an upload whose API process died is undone by the sweeper, and does not block the next one
    await col('environments').updateOne({ _id: id }, { $set: { status: 'uploading', upload: { id: 'upl_dead', previousStatus: 'ready', startedAt: new Date(Date.now() - 3 * 3_600_000) } } });
    expect((await envById(key, id)).status).toBe('uploading');
    const swept = await runStorageSweep({ blobs: serviceBlobs(db), files: new FilesRepository(db, serviceBlobs(db)), environments: new EnvironmentsRepository(db), profiles: new ProfilesRepository(db) });
    expect(swept.staleUploads).toBeGreaterThanOrEqual(1);
    expect(await envById(key, id)).toMatchObject({ status: 'ready', blobSize: after.blobSize });
    await col('environments').updateOne({ _id: id }, { $set: { status: 'uploading', upload: { id: 'upl_dead2', previousStatus: 'ready', startedAt: new Date(Date.now() - 3 * 3_600_000) } } });
    expect((await send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(first)] })).body.environment).toMatchObject({ status: 'ready', blobSize: first.length });
  });

  it('keeps attached files: add several, list, delete, with the exact 404', async () => {
    const { apiKey: key } = await createUser();
    const id = (await api(base(), 'POST', '/environments', { key, body: { name: 'files' } })).body.environment._id;
    const other = (await api(base(), 'POST', '/environments', { key, body: { name: 'other' } })).body.environment._id;
    const a = randomBytes(70_000);
    const added = await send('POST', `/environments/${id}/files`, {
      key,
      parts: [
        { field: 'files', filename: 'invoice.pdf', type: 'application/pdf', content: a },
        { field: 'files', filename: 'notes.txt', type: 'text/plain', content: 'remember the milk' },
      ],
    });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({
      success: true,
      files: [
        { fileId: expect.stringMatching(/^file_/), originalName: 'invoice.pdf', size: a.length, createdAt: expect.any(String) },
        { fileId: expect.any(String), originalName: 'notes.txt', size: 17, createdAt: expect.any(String) },
      ],
    });
    const [pdf, notes] = added.body.files;
    const list = await api(base(), 'GET', `/environments/${id}/files`, { key });
    expect(list.body).toEqual({ success: true, files: added.body.files });
    expect((await api(base(), 'GET', `/environments/${other}/files`, { key })).body.files).toEqual([]);

    const bytes = await send('GET', `/files/${pdf.fileId}/download`, { key });
    expect(bytes.status).toBe(200);
    expect(bytes.bytes.equals(a)).toBe(true);

    const none = await send('POST', `/environments/${id}/files`, { key, parts: [{ field: 'file', filename: 'wrong-field.txt', content: 'x' }] });
    expect(none.body).toMatchObject({ success: false, code: 'INVALID_PARAMETER', message: 'Unknown form field "file": the files go in the field "files"' });

    const wrongEnv = await api(base(), 'DELETE', `/environments/${other}/files/${notes.fileId}`, { key });
    expect(wrongEnv.status).toBe(404);
    expect(wrongEnv.body).toMatchObject({ success: false, message: 'File not found' });
    const del = await api(base(), 'DELETE', `/environments/${id}/files/${notes.fileId}`, { key });
    expect(del.body).toEqual({ success: true, message: expect.any(String) });
    const again = await api(base(), 'DELETE', `/environments/${id}/files/${notes.fileId}`, { key });
    expect(again.status).toBe(404);
    expect(again.body.message).toBe('File not found');
    expect((await api(base(), 'GET', `/environments/${id}/files`, { key })).body.files).toEqual([pdf]);

    // deleting the environment deletes its files
    await api(base(), 'DELETE', `/environments/${id}`, { key });
    expect((await send('GET', `/files/${pdf.fileId}/download`, { key })).status).toBe(404);
    expect(await col('files').countDocuments({ environmentId: id })).toBe(0);
  });

  it('stores a chat connection with its token sealed, validated per provider', async () => {
    const { apiKey: key } = await createUser();
    const id = (await api(base(), 'POST', '/environments', { key, body: { name: 'chat' } })).body.environment._id;
    const token = `123456789:${randomBytes(20).toString('hex')}`;
    const saved = await api(base(), 'PUT', `/environments/${id}/chat`, { key, body: { provider: 'telegram', botToken: token, chatId: 42 } });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ success: true, chat: { provider: 'telegram', chatId: '42', botToken: `****${token.slice(-4)}` } });
    const listed = await api(base(), 'GET', '/environments', { key });
    expect(listed.body.environments[0].chat).toMatchObject({ provider: 'telegram', chatId: '42' });
    expect(listed.text).not.toContain(token);

    // sealed at rest, and opens with the service's key for this environment only
    const raw = await col('environments').findOne({ _id: id });
    expect(JSON.stringify(raw)).not.toContain(token.split(':')[1]);
    const key32 = Buffer.from(readFileSync(path.join(serviceEnv().DATA_DIR, 'payload.key'), 'utf8').trim(), 'hex');
    // beside the user's fields, the secret token that verifies the chat's replies (reach-out)
    expect(openChatConnection(key32, id, raw!.chat)).toEqual({ chatId: '42', botToken: token, webhookSecret: expect.any(String) });
    expect(() => openChatConnection(key32, 'env_other', raw!.chat)).toThrow();

    const cases: [unknown, number, object][] = [
      [{ botToken: token }, 400, { code: 'MISSING_REQUIRED_FIELD', details: { field: 'provider' } }],
      [{ provider: 'signal' }, 400, { message: 'provider must be one of: telegram, slack, discord, whatsapp, teams' }],
      [{ provider: 'telegram', botToken: token }, 400, { code: 'MISSING_REQUIRED_FIELD', details: { field: 'chatId' } }],
      [{ provider: 'telegram', botToken: 'not-a-token', chatId: 1 }, 400, { code: 'INVALID_PARAMETER', details: { parameter: 'botToken', value: '[redacted]' } }],
      [{ provider: 'slack', botToken: 'xoxb-1-2-abc', channelId: 'general' }, 400, { details: { parameter: 'channelId' } }],
      [{ provider: 'teams', webhookUrl: 'http://example.com/hook' }, 400, { details: { parameter: 'webhookUrl' } }],
    ];
    for (const [body, status, shape] of cases) {
      const r = await api(base(), 'PUT', `/environments/${id}/chat`, { key, body });
      expect(r.status).toBe(status);
      expect(r.body).toMatchObject({ success: false, ...shape });
    }
    for (const body of [
      { provider: 'slack', botToken: 'xoxb-123-456-abcdef', channelId: 'C0123456' },
      { provider: 'discord', botToken: 'x'.repeat(60), userId: '123456789012345678' },
      { provider: 'whatsapp', accessToken: 'EAAG'.padEnd(40, 'z'), phoneNumberId: '1234567890', to: '+15551234567' },
      { provider: 'teams', webhookUrl: 'https://example.webhook.office.com/webhookb2/abc' },
    ]) {
      const r = await api(base(), 'PUT', `/environments/${id}/chat`, { key, body });
      expect(r.status).toBe(200);
      expect(r.body.chat.provider).toBe(body.provider);
      expect(r.text).not.toContain((body as any).botToken ?? (body as any).accessToken ?? (body as any).webhookUrl);
    }
    const removed = await api(base(), 'DELETE', `/environments/${id}/chat`, { key });
    expect(removed.body).toEqual({ success: true, message: expect.any(String) });
    // removing it again succeeds: afterwards there is none either way
    expect(await api(base(), 'DELETE', `/environments/${id}/chat`, { key })).toMatchObject({ status: 200, body: { success: true, message: 'No chat connection to remove' } });
    expect((await envById(key, id)).chat).toBeNull();
  });

  it("answers 404 Environment not found for another user's environment on every endpoint", async () => {
    const { apiKey: owner } = await createUser();
    const { apiKey: key } = await createUser();
    const id = (await api(base(), 'POST', '/environments', { key: owner, body: { name: 'private' } })).body.environment._id;
    const fileId = (await send('POST', `/environments/${id}/files`, { key: owner, parts: [{ field: 'files', filename: 'a.txt', content: 'secret' }] })).body.files[0].fileId;
    const attempts = [
      () => api(base(), 'DELETE', `/environments/${id}`, { key }),
      () => api(base(), 'GET', `/environments/${id}/files`, { key }),
      () => api(base(), 'DELETE', `/environments/${id}/files/${fileId}`, { key }),
      () => api(base(), 'PUT', `/environments/${id}/chat`, { key, body: { provider: 'teams', webhookUrl: 'https://example.com/x' } }),
      () => api(base(), 'DELETE', `/environments/${id}/chat`, { key }),
      async () => send('POST', `/environments/${id}/upload`, { key, parts: [archivePart(await profileArchive('x'))] }),
      () => send('POST', `/environments/${id}/files`, { key, parts: [{ field: 'files', filename: 'b.txt', content: 'x' }] }),
    ];
    for (const attempt of attempts) {
      const r = await attempt();
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ success: false, message: 'Environment not found' });
    }
    expect((await send('GET', `/files/${fileId}/download`, { key })).status).toBe(404);
    expect((await envsOf(owner)).map((e) => e._id)).toEqual([id]);
  });
});

describe('profiles', () => {
  // The /profiles limit is per IP: each test speaks from its own address (the service trusts X-Forwarded-For).
  const ip = () => ({ 'x-forwarded-for': `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` });

  it('creates profiles with the decided fields, 20 per user, and deletes them', async () => {
    const headers = ip();
    const { userId, apiKey: key } = await createUser();
    expect((await api(base(), 'POST', '/profiles', { key, headers, body: {} })).body).toMatchObject({ success: false, message: 'Profile name is required' });
    expect((await api(base(), 'POST', '/profiles', { key, headers, body: { name: 'x'.repeat(101) } })).body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'name' } });
    expect((await api(base(), 'POST', '/profiles', { key, headers, body: { name: 'x', description: 'd'.repeat(501) } })).body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'description' } });
    const created = await api(base(), 'POST', '/profiles', { key, headers, body: { name: 'Shopping', description: 'amazon login' } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      success: true,
      message: expect.any(String),
      profile: {
        _id: expect.stringMatching(/^prof_/),
        userId,
        name: 'Shopping',
        description: 'amazon login',
        status: 'empty',
        blobSize: null,
        blobUploadedAt: null,
        lastUsedAt: null,
        usageCount: 0,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    for (let i = 1; i < 20; i++) expect((await api(base(), 'POST', '/profiles', { key, headers, body: { name: `p${i}` } })).status).toBe(200);
    const over = await api(base(), 'POST', '/profiles', { key, headers, body: { name: 'p21' } });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ success: false, message: 'Maximum of 20 profiles allowed' });
    const list = await api(base(), 'GET', '/profiles', { key, headers });
    expect(list.body.profiles).toHaveLength(20);
    expect(list.body.profiles[0]).toEqual(created.body.profile);

    const { apiKey: other } = await createUser();
    const id = created.body.profile._id;
    for (const [method, p] of [
      ['DELETE', `/profiles/${id}`],
      ['GET', `/profiles/${id}/download`],
    ]) {
      const r = await api(base(), method, p, { key: other, headers });
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ success: false, message: 'Profile not found' });
    }
    expect((await api(base(), 'DELETE', `/profiles/${id}`, { key, headers })).body).toEqual({ success: true, message: expect.any(String) });
    expect((await api(base(), 'DELETE', `/profiles/${id}`, { key, headers })).status).toBe(404);
  });

  it('uploads and downloads the same bytes; a refused archive keeps the previous one; signed links work for an hour', async () => {
    const headers = ip();
    const { apiKey: key } = await createUser();
    const { apiKey: other } = await createUser();
    const id = (await api(base(), 'POST', '/profiles', { key, headers, body: { name: 'Bank / "main"' } })).body.profile._id;
    const empty = await api(base(), 'GET', `/profiles/${id}/download`, { key, headers });
    expect(empty.status).toBe(404);
    expect(empty.body).toMatchObject({ success: false, code: 'PROFILE_EMPTY' });

    const archive = await profileArchive('bank');
    const up = await send('POST', `/profiles/${id}/upload`, { key, headers, parts: [archivePart(archive)] });
    expect(up.status).toBe(200);
    expect(up.body.profile).toMatchObject({ _id: id, status: 'ready', blobSize: archive.length, blobUploadedAt: expect.any(String) });

    const down = await send('GET', `/profiles/${id}/download`, { key, headers });
    expect(down.status).toBe(200);
    expect(down.headers.get('content-type')).toBe('application/gzip');
    expect(down.headers.get('content-disposition')).toMatch(/^attachment; filename="Bank _ _main_.tar.gz"/);
    expect(down.bytes.equals(archive)).toBe(true);

    for (const bad of [await tarGz([{ name: '../escape', content: 'x' }]), await tarGz([{ name: 'l', type: 'symlink', linkname: '../../x' }]), Buffer.from('nope')]) {
      const r = await send('POST', `/profiles/${id}/upload`, { key, headers, parts: [archivePart(bad)] });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('INVALID_ARCHIVE');
    }
    const still = await send('GET', `/profiles/${id}/download`, { key, headers });
    expect(still.bytes.equals(archive)).toBe(true);
    expect((await api(base(), 'GET', '/profiles', { key, headers })).body.profiles[0]).toMatchObject({ status: 'ready', blobUploadedAt: up.body.profile.blobUploadedAt });

    expect((await send('POST', `/profiles/${id}/upload`, { key: other, headers, parts: [archivePart(archive)] })).status).toBe(404);
    const link = await api(base(), 'GET', `/profiles/${id}/download?link=1`, { key, headers });
    expect(link.body).toMatchObject({ success: true, downloadUrl: expect.stringContaining(`/profiles/${id}/download?token=`), expiresAt: expect.any(String) });
    expect(new Date(link.body.expiresAt).getTime() - Date.now()).toBeGreaterThan(59 * 60_000);
    const viaLink = await fetch(link.body.downloadUrl, { headers });
    expect(Buffer.from(await viaLink.arrayBuffer()).equals(archive)).toBe(true);
    const tampered = await fetch(link.body.downloadUrl.replace(/token=\d/, 'token=9'), { headers });
    expect(tampered.status).toBe(404);

    await api(base(), 'DELETE', `/profiles/${id}`, { key, headers });
    expect((await fetch(link.body.downloadUrl, { headers })).status).toBe(404);
  });

  it('limits /profiles to 100 requests per 15 minutes per IP, with the rate-limit headers and 429 body', async () => {
    const headers = ip();
    const { apiKey: key } = await createUser();
    let last: Awaited<ReturnType<typeof api>> | undefined;
    for (let i = 0; i < 100; i++) {
      // unauthenticated requests count too
      last = await api(base(), 'GET', '/profiles', { key: i % 10 === 0 ? undefined : key, headers });
      expect(last.status).toBe(i % 10 === 0 ? 401 : 200);
    }
    expect(last!.headers.get('x-ratelimit-limit')).toBe('100');
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
    const limited = await api(base(), 'GET', '/profiles', { key, headers });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ success: false, message: expect.any(String) });
    const reset = Number(limited.headers.get('x-ratelimit-reset'));
    expect(reset * 1000).toBeGreaterThan(Date.now() + 14 * 60_000);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    // another address is not limited, nor are environments
    expect((await api(base(), 'GET', '/profiles', { key, headers: ip() })).status).toBe(200);
    expect((await api(base(), 'GET', '/environments', { key, headers })).status).toBe(200);
  });
});

describe('files for tasks', () => {
  const secret = () => linkSecret(loadConfig(serviceEnv()));

  it('POST /files/upload takes several files; the owner and a signed link download them; anyone else gets 404', async () => {
    const { userId, apiKey: key } = await createUser();
    const { apiKey: other } = await createUser();
    const a = randomBytes(1_500_000);
    const b = Buffer.from('name,email\nada,ada@example.com\n');
    const up = await send('POST', '/files/upload', {
      key,
      parts: [
        { field: 'files', filename: 'scan.png', type: 'image/png', content: a },
        { field: 'files', filename: 'résumé, final (2).csv', type: 'text/csv', content: b },
      ],
    });
    expect(up.status).toBe(200);
    expect(up.headers.get('x-ratelimit-limit')).toBe('10');
    expect(up.body).toEqual({
      success: true,
      files: [
        { fileId: expect.stringMatching(/^file_/), originalName: 'scan.png', size: a.length },
        { fileId: expect.stringMatching(/^file_/), originalName: 'résumé, final (2).csv', size: b.length },
      ],
    });
    const [fa, fb] = up.body.files;
    const record = await col('files').findOne({ _id: fa.fileId });
    expect(record).toMatchObject({ userId, kind: 'upload' });
    expect(record!.expiresAt.getTime() - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(record!.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(60 * 60_000);

    const own = await send('GET', `/files/${fb.fileId}/download`, { key });
    expect(own.status).toBe(200);
    expect(own.bytes.equals(b)).toBe(true);
    expect(own.headers.get('content-disposition')).toBe(`attachment; filename="r_sum_, final (2).csv"; filename*=UTF-8''r%C3%A9sum%C3%A9%2C%20final%20%282%29.csv`);
    expect(own.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await send('GET', `/files/${fa.fileId}/download`, { key })).bytes.equals(a)).toBe(true);

    const foreign = await send('GET', `/files/${fa.fileId}/download`, { key: other });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ success: false, message: 'File not found' });
    expect((await send('GET', `/files/${fa.fileId}/download`)).status).toBe(401);
    expect((await send('GET', '/files/file_nope/download', { key })).status).toBe(404);

    const token = signFileLink(secret(), fa.fileId, Date.now() + 3_600_000);
    expect((await send('GET', `/files/${fa.fileId}/download?token=${token}`)).bytes.equals(a)).toBe(true);
    expect((await send('GET', `/files/${fb.fileId}/download?token=${token}`)).status).toBe(404);
    expect((await send('GET', `/files/${fa.fileId}/download?token=${signFileLink(secret(), fa.fileId, Date.now() - 1)}`)).status).toBe(404);
    expect((await send('GET', `/files/${fa.fileId}/download?token=${signFileLink('wrong secret', fa.fileId, Date.now() + 60_000)}`)).status).toBe(404);

    const none = await send('POST', '/files/upload', { key, parts: [{ field: 'note', content: 'x' }] });
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ success: false, code: 'INVALID_PARAMETER', message: 'Unknown form field "note": the files go in the field "files"' });
    const tooMany = await send('POST', '/files/upload', { key, parts: Array.from({ length: 21 }, (_, i) => ({ field: 'files', filename: `f${i}.txt`, content: 'x' })) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toBe('At most 20 files per request');
  });

  it('refuses a file over the per-file cap with 413 and keeps nothing of the request', async () => {
    const { userId, apiKey: key } = await createUser();
    const cap = 50 * MB;
    const small = randomBytes(10_000);
    const r = await send('POST', '/files/upload', {
      key,
      parts: [
        { field: 'files', filename: 'small.bin', content: small },
        { field: 'files', filename: 'huge.bin', content: Buffer.alloc(cap + 1, 1) },
      ],
    });
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE', message: '"huge.bin" exceeds the maximum size of 50 MB' });
    await waitFor(async () => (await col('blobs.files').countDocuments({ 'metadata.userId': userId })) === 0, 5_000, 100);
    expect(await col('files').countDocuments({ userId })).toBe(0);
    // the user's storage holds nothing, and a file of exactly the cap is fine
    const exact = await send('POST', '/files/upload', { key, parts: [{ field: 'files', filename: 'exact.bin', content: Buffer.alloc(cap, 2) }] });
    expect(exact.status).toBe(200);
    expect(exact.body.files[0].size).toBe(cap);
  });

  it('serves task downloads stored by the worker, resolves fileIds per user, and sweeps expired uploads with their blobs', async () => {
    const { userId, apiKey: key } = await createUser();
    const { userId: otherId } = await createUser();
    const blobs = serviceBlobs(db);
    const files = new FilesRepository(db, blobs, { uploadTtlMs: 3_600_000 });

    // what the worker does with a captured download
    const content = Buffer.from('%PDF-1.4 report');
    const blob = await blobs.put(Readable.from([content]), { filename: 'report.pdf', contentType: 'application/pdf', userId, maxBytes: MB, kind: 'download' });
    const dl = await files.createFromBlob({ userId, blob, originalName: 'report.pdf', kind: 'download', sessionId: 's1', taskId: 'task_1', sourceUrl: 'https://example.com/report.pdf' });
    expect(dl).toMatchObject({ kind: 'download', sessionId: 's1', taskId: 'task_1', sourceUrl: 'https://example.com/report.pdf', expiresAt: null, size: content.length });
    const viaKey = await send('GET', `/files/${dl._id}/download`, { key });
    expect(viaKey.bytes.equals(content)).toBe(true);
    expect(viaKey.headers.get('content-type')).toBe('application/pdf');
    expect((await send('GET', `/files/${dl._id}/download?token=${signFileLink(secret(), dl._id, Date.now() + 60_000)}`)).bytes.equals(content)).toBe(true);

    // a blob over its cap: 413 and nothing left behind
    await expect(blobs.put(Readable.from([Buffer.alloc(700_000), Buffer.alloc(700_000)]), { filename: 'x', contentType: 'x', userId, maxBytes: MB, kind: 'download' })).rejects.toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    await waitFor(async () => (await col('blobs.files').countDocuments({ 'metadata.userId': userId })) === 1, 5_000, 100);
    expect(await blobs.usage(userId)).toBe(content.length);

    const up = (await send('POST', '/files/upload', { key, parts: [{ field: 'files', filename: 'a.txt', content: 'aaa' }] })).body.files[0];
    const resolved = await files.resolve(userId, [up.fileId, dl._id, 'file_unknown']);
    expect(resolved.files.map((f) => f._id)).toEqual([up.fileId, dl._id]);
    expect(resolved.missing).toEqual(['file_unknown']);
    expect((await files.resolve(otherId, [up.fileId])).missing).toEqual([up.fileId]);

    // claimed by a task, an upload outlives the task; unclaimed it goes after its hour
    const claimed = await files.claimForTask(userId, [up.fileId]);
    expect(claimed.missing).toEqual([]);
    const held = await col('files').findOne({ _id: up.fileId });
    expect(held!.expiresAt.getTime()).toBeGreaterThan(Date.now() + 64 * 60_000);
    const later = (await send('POST', '/files/upload', { key, parts: [{ field: 'files', filename: 'b.txt', content: 'bbb' }] })).body.files[0];
    const swept = await files.sweepExpired(new Date(Date.now() + 61 * 60_000));
    expect(swept).toBeGreaterThanOrEqual(1);
    expect(await col('files').findOne({ _id: later.fileId })).toBeNull();
    expect((await send('GET', `/files/${later.fileId}/download`, { key })).status).toBe(404);
    expect(await col('files').findOne({ _id: up.fileId })).not.toBeNull();
    expect(await col('files').findOne({ _id: dl._id })).not.toBeNull();
    expect(await blobs.usage(userId)).toBe(content.length + 3);

    // blobs that nothing refers to (a process died between storing and recording) are swept
    const orphan = await blobs.put(Readable.from([Buffer.from('orphan')]), { filename: 'o', contentType: 'x', userId, maxBytes: MB, kind: 'upload' });
    const mine = async () => (await col('blobs.files').find({ 'metadata.userId': userId }).toArray()).map((b) => b._id).sort();
    const ownedOnly = Object.assign(Object.create(blobs), { idsBefore: async (before: Date, limit?: number, after?: string) => (await blobs.idsBefore(before, limit, after)).filter((id) => id.startsWith('blob_') && ids.includes(id)) });
    const ids = await mine();
    expect(ids).toContain(orphan.blobId);
    const removed = await sweepOrphanBlobs(ownedOnly, [files, new EnvironmentsRepository(db), new ProfilesRepository(db)], new Date(Date.now() + 60_000));
    expect(removed).toBe(1);
    expect(await mine()).toEqual(ids.filter((id) => id !== orphan.blobId));
  }, 300_000);
});

describe('a 200 MB profile archive (benchmark figures)', () => {
  let service: ServiceProcess;
  let dir: string;
  beforeAll(async () => {
    // An API-only process, so its memory is the upload's alone.
    service = await startService({ ROLE: 'api' });
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'profile-bench-'));
  });
  afterAll(async () => {
    await service?.stop();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  const rssMb = () => {
    const status = readFileSync(`/proc/${service.child.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
  };

  it('streams in and out with the process memory staying under 150 MB above rest', async () => {
    const sizeMb = Number(process.env.BENCH_PROFILE_MB ?? 200);
    // incompressible content, so the archive is as large as its files
    const file = path.join(dir, 'profile.tar.gz');
    const pack = tar.pack();
    const out = createWriteStream(file);
    const gz = zlib.createGzip({ level: 1 });
    const written = new Promise<void>((r) => out.on('close', () => r()));
    (pack as unknown as NodeJS.ReadableStream).pipe(gz).pipe(out);
    const block = randomBytes(4 * MB);
    for (let i = 0; i < sizeMb / 4; i++) {
      const buf = Buffer.from(block);
      buf.writeUInt32LE(i, 0);
      await new Promise<void>((resolve, reject) => pack.entry({ name: `Default/Cache/data_${i}` }, buf, (err) => (err ? reject(err) : resolve())));
    }
    pack.finalize();
    await written;
    const size = (await fsp.stat(file)).size;
    const sha = createHash('sha256').update(await fsp.readFile(file)).digest('hex');

    const { apiKey: key } = await createUser();
    const headers = { authorization: `Bearer ${key}`, 'x-forwarded-for': '10.255.0.1' };
    const id = (await (await fetch(`${service.baseUrl}/environments`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'big' }) })).json()).environment._id;
    const pid = (await (await fetch(`${service.baseUrl}/profiles`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'big' }) })).json()).profile._id;

    await new Promise((r) => setTimeout(r, 500));
    const rest = rssMb();
    let peak = rest;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb())), 100);
    try {
      const boundary = 'bench-boundary';
      const t0 = Date.now();
      const res = await fetch(`${service.baseUrl}/environments/${id}/upload`, {
        method: 'POST',
        headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: multipart(boundary, [archivePart(createReadStream(file, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>)]) as any,
        duplex: 'half',
      } as RequestInit);
      const body = await res.json();
      const upSeconds = (Date.now() - t0) / 1000;
      expect(res.status).toBe(200);
      expect(body.environment).toMatchObject({ status: 'ready', blobSize: size });
      const upPeak = peak;

      // the same archive as a profile, then downloaded
      const pres = await fetch(`${service.baseUrl}/profiles/${pid}/upload`, {
        method: 'POST',
        headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: multipart(boundary, [archivePart(createReadStream(file, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>)]) as any,
        duplex: 'half',
      } as RequestInit);
      expect(pres.status).toBe(200);
      const beforeDown = peak;
      peak = rssMb();
      const t1 = Date.now();
      const down = await fetch(`${service.baseUrl}/profiles/${pid}/download`, { headers });
      const hash = createHash('sha256');
      let got = 0;
      for await (const chunk of down.body as unknown as AsyncIterable<Uint8Array>) {
        hash.update(chunk);
        got += chunk.length;
      }
      const downSeconds = (Date.now() - t1) / 1000;
      const downPeak = peak;
      peak = Math.max(peak, beforeDown);
      expect(got).toBe(size);
      expect(hash.digest('hex')).toBe(sha);

      const mb = size / MB;
      console.log(
        `profile archive ${mb.toFixed(0)} MB: upload ${upSeconds.toFixed(1)} s (${(mb / upSeconds).toFixed(1)} MB/s, stored and validated at once), ` +
          `download ${downSeconds.toFixed(1)} s (${(mb / downSeconds).toFixed(1)} MB/s); API process RSS at rest ${rest.toFixed(0)} MB, ` +
          `peak during upload ${upPeak.toFixed(0)} MB (+${(upPeak - rest).toFixed(0)} MB), during download ${downPeak.toFixed(0)} MB (+${(downPeak - rest).toFixed(0)} MB)`,
      );
      expect(peak - rest).toBeLessThan(150);
    } finally {
      clearInterval(sampler);
    }
  }, 600_000);
});
