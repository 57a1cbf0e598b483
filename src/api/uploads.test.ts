import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import express from 'express';
import tar from 'tar-stream';
import { NotFoundError, ServiceError } from '../contracts/errors';
import { createLogger } from '../logger';
import type { BlobInfo, BlobStore } from '../contracts/profiles';
import { errorHandler } from './middleware/errors';
import { MemoryReservationLedger, StorageQuota } from '../store/storage-quota';
import { cleanFilename, putCapped, receiveArchive, receiveFiles, type StorageSettings } from './uploads';

/** Blobs in memory; `usage` can be slowed down to widen the window before a store attaches to its stream. */
class MemoryBlobs implements BlobStore {
  blobs = new Map<string, { data: Buffer; userId: string }>();
  usageDelayMs = 0;
  private n = 0;
  async put(input: Readable, meta: { filename: string; contentType: string; userId: string; maxBytes: number; kind: string }): Promise<BlobInfo> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of input) {
      size += (c as Buffer).length;
      if (size > meta.maxBytes) {
        input.destroy();
        throw new ServiceError('PAYLOAD_TOO_LARGE', 'too large');
      }
      chunks.push(c as Buffer);
    }
    const blobId = `blob_${++this.n}`;
    this.blobs.set(blobId, { data: Buffer.concat(chunks), userId: meta.userId });
    return { blobId, size, filename: meta.filename, contentType: meta.contentType, userId: meta.userId, createdAt: new Date() };
  }
  async get(blobId: string): Promise<Readable> {
    const b = this.blobs.get(blobId);
    if (!b) throw new NotFoundError('BLOB_NOT_FOUND', 'Blob not found');
    return Readable.from([b.data]);
  }
  async stat(): Promise<BlobInfo | null> {
    return null;
  }
  async delete(blobId: string): Promise<void> {
    this.blobs.delete(blobId);
  }
  async usage(userId: string): Promise<number> {
    if (this.usageDelayMs) await new Promise((r) => setTimeout(r, this.usageDelayMs));
    return [...this.blobs.values()].filter((b) => b.userId === userId).reduce((s, b) => s + b.data.length, 0);
  }
}

/** The part of the archive repository receiveArchive uses, over one record. */
function fakeRepo() {
  const record: any = { _id: 'env_1', userId: 'usr_1', name: 'e', status: 'ready', blobId: 'blob_old', blobSize: 3, upload: null };
  const calls: string[] = [];
  return {
    record,
    calls,
    async get(id: string, userId: string) {
      return id === record._id && userId === record.userId ? { ...record } : null;
    },
    async beginUpload() {
      calls.push('begin');
      if (record.upload) return { ok: false, reason: 'uploading' };
      const before = { ...record };
      record.upload = { id: 'upl_1', previousStatus: record.status };
      record.status = 'uploading';
      return { ok: true, record: before, uploadId: 'upl_1' };
    },
    async finishUpload(_id: string, _uploadId: string, blob: { blobId: string; size: number }) {
      calls.push('finish');
      const replacedBlobId = record.blobId;
      Object.assign(record, { status: 'ready', blobId: blob.blobId, blobSize: blob.size, upload: null });
      return { record: { ...record }, replacedBlobId };
    },
    async abortUpload() {
      calls.push('abort');
      record.status = record.upload.previousStatus;
      record.upload = null;
    },
  };
}

const KB = 1024;
const settings: StorageSettings = { PROFILE_MAX_BYTES: 256 * KB, PROFILE_MAX_EXPANDED_BYTES: 1024 * KB, FILE_MAX_BYTES: 64 * KB, USER_STORAGE_MAX_BYTES: 10 * 1024 * KB, FILE_UPLOAD_TTL_MS: 3_600_000 };
const logger = createLogger('silent');

async function tarGz(files: Record<string, Buffer | string>): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const c of pack as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  for (const [name, content] of Object.entries(files)) await new Promise<void>((res, rej) => pack.entry({ name }, content, (e) => (e ? rej(e) : res())));
  pack.finalize();
  await collected;
  return zlib.gzipSync(Buffer.concat(chunks));
}

type Part = { field: string; filename?: string; content: Buffer | string };
function multipart(parts: Part[], boundary = 'xyzBOUNDARY', end = true): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    out.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.field}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}\r\n\r\n`));
    out.push(Buffer.from(p.content));
    out.push(Buffer.from('\r\n'));
  }
  if (end) out.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(out);
}

let server: Server;
let base: string;
let blobs: MemoryBlobs;
let ledger: MemoryReservationLedger;
let repo: ReturnType<typeof fakeRepo>;
const quotaOf = (limitBytes: number) => new StorageQuota({ usage: blobs, ledger, limitBytes });

beforeEach(async () => {
  blobs = new MemoryBlobs();
  blobs.blobs.set('blob_old', { data: Buffer.from('old'), userId: 'usr_1' });
  ledger = new MemoryReservationLedger();
  repo = fakeRepo();
  const storage = { blobs, quota: quotaOf(settings.USER_STORAGE_MAX_BYTES) };
  const app = express();
  app.post('/archive', async (req, res) => {
    const r = await receiveArchive(req, { ...storage, repo: repo as any, settings, logger }, { id: 'env_1', userId: 'usr_1', kind: 'environment', notFound: () => new NotFoundError('ENVIRONMENT_NOT_FOUND', 'Environment not found') });
    res.json({ success: true, record: r });
  });
  app.post('/files', async (req, res) => {
    const files = await receiveFiles(req, {
      field: 'files',
      maxFiles: 3,
      onFile: (f) => putCapped(storage, f, { userId: 'usr_1', kind: 'upload', perFile: settings.FILE_MAX_BYTES }),
      undo: (b) => blobs.delete(b.blobId),
    });
    res.json({ success: true, files: files.map((b) => ({ name: b.filename, size: b.size })) });
  });
  app.post('/quota', async (req, res) => {
    const small = { blobs, quota: quotaOf(20 * KB) };
    const files = await receiveFiles(req, { field: 'files', maxFiles: 3, onFile: (f) => putCapped(small, f, { userId: 'usr_1', kind: 'upload', perFile: settings.FILE_MAX_BYTES }) });
    res.json({ success: true, count: files.length });
  });
  app.use(errorHandler(logger));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const post = async (path: string, body: Buffer | AsyncIterable<Buffer>, boundary = 'xyzBOUNDARY') => {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: body as any, duplex: 'half' } as RequestInit);
  return { status: res.status, body: (await res.json()) as any };
};

describe('receiveArchive', () => {
  it('stores a valid archive, swaps it in and deletes the one it replaced', async () => {
    const archive = await tarGz({ 'Default/Cookies': 'c' });
    const r = await post('/archive', multipart([{ field: 'file', filename: 'p.tar.gz', content: archive }]));
    expect(r.status).toBe(200);
    expect(r.body.record).toMatchObject({ status: 'ready', blobSize: archive.length });
    expect(repo.calls).toEqual(['begin', 'finish']);
    expect([...blobs.blobs.keys()]).toEqual([r.body.record.blobId]);
  });

  it('refuses an invalid archive even while the store is still checking the quota, and restores the record', async () => {
    blobs.usageDelayMs = 100;
    const r = await post('/archive', multipart([{ field: 'file', filename: 'p.tar.gz', content: randomBytes(200 * KB) }]));
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('INVALID_ARCHIVE');
    expect(repo.calls).toEqual(['begin', 'abort']);
    expect(repo.record).toMatchObject({ status: 'ready', blobId: 'blob_old', upload: null });
    expect([...blobs.blobs.keys()]).toEqual(['blob_old']);
  });

  it('refuses an archive over the size cap with 413, keeping the old one', async () => {
    const archive = await tarGz({ big: randomBytes(300 * KB) });
    const r = await post('/archive', multipart([{ field: 'file', filename: 'p.tgz', content: archive }]));
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: '"p.tgz" exceeds the maximum size of 256 KB' });
    expect(repo.record).toMatchObject({ status: 'ready', blobId: 'blob_old' });
    expect([...blobs.blobs.keys()]).toEqual(['blob_old']);
  });

  it('checks the name and the presence of the file', async () => {
    expect((await post('/archive', multipart([{ field: 'file', filename: 'p.zip', content: 'x' }]))).body.message).toBe('Only .tar.gz files are allowed');
    expect((await post('/archive', multipart([{ field: 'other', filename: 'p.tar.gz', content: 'x' }]))).body.message).toBe('Unknown form field "other": the files go in the field "file"');
    expect((await post('/archive', multipart([{ field: 'file', content: 'a text field' }]))).body.message).toBe('No file provided');
    const json = await fetch(`${base}/archive`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(await json.json()).toMatchObject({ message: 'No file provided' });
    expect(repo.calls).toEqual([]);
  });

  it('puts the record back when the client goes away mid-upload', async () => {
    const archive = await tarGz({ a: randomBytes(100 * KB) });
    const whole = multipart([{ field: 'file', filename: 'p.tar.gz', content: archive }]);
    const abort = new AbortController();
    const sent = fetch(`${base}/archive`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=xyzBOUNDARY' },
      body: (async function* () {
        yield whole.subarray(0, 20 * KB);
        await new Promise(() => undefined); // never finishes
      })() as any,
      duplex: 'half',
      signal: abort.signal,
    } as RequestInit).catch((e) => e);
    for (let i = 0; i < 100 && repo.record.status !== 'uploading'; i++) await new Promise((r) => setTimeout(r, 20));
    expect(repo.record.status).toBe('uploading');
    abort.abort();
    await sent;
    for (let i = 0; i < 100 && repo.record.status === 'uploading'; i++) await new Promise((r) => setTimeout(r, 20));
    expect(repo.record).toMatchObject({ status: 'ready', blobId: 'blob_old', upload: null });
    expect([...blobs.blobs.keys()]).toEqual(['blob_old']);
  });
});

describe('receiveFiles', () => {
  it('stores several files in order', async () => {
    const r = await post('/files', multipart([
      { field: 'files', filename: 'a.txt', content: 'aaa' },
      { field: 'files', filename: 'C:\\Users\\me\\b.bin', content: randomBytes(10 * KB) },
      { field: 'files', filename: '', content: '' },
    ]));
    expect(r.status).toBe(200);
    expect(r.body.files).toEqual([
      { name: 'a.txt', size: 3 },
      { name: 'b.bin', size: 10 * KB },
    ]);
  });

  it('refuses a form field other than the files (its name is said), and keeps nothing', async () => {
    const r = await post('/files', multipart([
      { field: 'files', filename: 'a.txt', content: 'aaa' },
      { field: 'note', content: 'not a file' },
    ]));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'INVALID_PARAMETER', message: 'Unknown form field "note": the files go in the field "files"' });
    expect([...blobs.blobs.keys()]).toEqual(['blob_old']);
  });

  it('undoes the files already stored when a later one fails', async () => {
    const r = await post('/files', multipart([
      { field: 'files', filename: 'ok.txt', content: 'fine' },
      { field: 'files', filename: 'big.bin', content: randomBytes(65 * KB) },
    ]));
    expect(r.status).toBe(413);
    expect(r.body.message).toBe('"big.bin" exceeds the maximum size of 64 KB');
    expect([...blobs.blobs.keys()]).toEqual(['blob_old']);
  });

  it("keeps a user's storage under the quota", async () => {
    expect((await post('/quota', multipart([{ field: 'files', filename: 'fits.bin', content: randomBytes(10 * KB) }]))).status).toBe(200);
    const over = await post('/quota', multipart([{ field: 'files', filename: 'more.bin', content: randomBytes(15 * KB) }]));
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ code: 'STORAGE_QUOTA_EXCEEDED', message: '"more.bin" does not fit in the storage quota of 20 KB' });
    expect(blobs.blobs.size).toBe(2);
    expect(ledger.reservations.size).toBe(0);
  });

  it('never lets parallel uploads add up past the quota: bytes are reserved before they are stored', async () => {
    // 6 uploads of 8 KB at once against 20 KB (3 bytes used): at most two fit
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post('/quota', multipart([{ field: 'files', filename: `p${i}.bin`, content: randomBytes(8 * KB) }])),
      ),
    );
    const stored = [...blobs.blobs.values()].filter((b) => b.userId === 'usr_1').reduce((n, b) => n + b.data.length, 0);
    expect(stored).toBeLessThanOrEqual(20 * KB);
    expect(results.filter((r) => r.status === 200).length).toBe(blobs.blobs.size - 1);
    expect(results.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    for (const r of results.filter((x) => x.status !== 200)) expect(r.body.code).toBe('STORAGE_QUOTA_EXCEEDED');
    expect(ledger.reservations.size).toBe(0);
  });

  it('refuses too many files and malformed bodies', async () => {
    const many = await post('/files', multipart(Array.from({ length: 4 }, (_, i) => ({ field: 'files', filename: `${i}.txt`, content: 'x' }))));
    expect(many.status).toBe(400);
    expect(many.body.message).toBe('At most 3 files per request');
    const cut = await post('/files', multipart([{ field: 'files', filename: 'a.txt', content: 'abc' }], 'xyzBOUNDARY', false));
    expect(cut.status).toBe(400);
    expect(cut.body.code).toBe('INVALID_PARAMS');
    expect([...blobs.blobs.keys()]).toEqual(['blob_old']);
  });
});

describe('cleanFilename', () => {
  it('keeps the base name without control characters', () => {
    expect(cleanFilename('../../etc/passwd')).toBe('passwd');
    expect(cleanFilename('a\u0000b\r\n.txt')).toBe('ab.txt');
    expect(cleanFilename('résumé.pdf')).toBe('résumé.pdf');
    expect(cleanFilename(undefined)).toBe('');
  });
});
