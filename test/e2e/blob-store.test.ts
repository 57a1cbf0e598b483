/**
 * The blob stores against the test database (FerretDB here): GridFS round trips in chunks,
 * files under a directory (the embedded default); the cap, delete.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { MongoClient, type Db } from 'mongodb';
import { BLOB_BUCKET, GridFsBlobStore } from '../../src/store/blobs';
import { FileBlobStore } from '../../src/store/file-blobs';

let mongo: MongoClient;
let db: Db;
let blobs: GridFsBlobStore;
const userId = 'usr_blobtest';

beforeAll(async () => {
  mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test');
  // A database of its own: the checks below look at every chunk.
  db = mongo.db(`blob_store_test_${Date.now()}`);
  blobs = new GridFsBlobStore(db, { chunkSizeBytes: 256 * 1024 });
});
afterAll(async () => {
  await db.dropDatabase();
  await mongo.close();
});

const chunks = () => db.collection<{ _id: unknown; files_id: string; n: number }>(`${BLOB_BUCKET}.chunks`);
/** A stream in uneven pieces, as a socket delivers it. */
const pieces = (data: Buffer) => Readable.from(Array.from({ length: Math.ceil(data.length / 70_001) }, (_, i) => data.subarray(i * 70_001, (i + 1) * 70_001)));

describe('blob store', () => {
  it('stores a blob in chunks and streams it back whole', async () => {
    const data = randomBytes(900 * 1024 + 17);
    const info = await blobs.put(pieces(data), { filename: 'a.bin', contentType: 'application/octet-stream', userId, maxBytes: 10 * 1024 * 1024, kind: 'upload' });
    expect(info).toMatchObject({ size: data.length, userId });
    const stored = await chunks().find({ files_id: info.blobId }).sort({ n: 1 }).toArray();
    expect(stored.map((c) => c.n)).toEqual([0, 1, 2, 3]);
    expect((await buffer(await blobs.get(info.blobId))).equals(data)).toBe(true);
    expect(await blobs.usage(userId)).toBeGreaterThanOrEqual(data.length);
    await blobs.delete(info.blobId);
    expect(await chunks().countDocuments({ files_id: info.blobId })).toBe(0);
    expect(await blobs.stat(info.blobId)).toBeNull();
    await expect(blobs.get(info.blobId)).rejects.toMatchObject({ status: 404 });
    await blobs.delete(info.blobId);
  });

  it('stores an empty blob, and refuses one past its cap keeping none of it', async () => {
    const empty = await blobs.put(Readable.from([]), { filename: 'e', contentType: 'text/plain', userId, maxBytes: 10, kind: 'upload' });
    expect((await buffer(await blobs.get(empty.blobId))).length).toBe(0);
    const before = await chunks().estimatedDocumentCount();
    await expect(blobs.put(pieces(randomBytes(600 * 1024)), { filename: 'big', contentType: 'application/octet-stream', userId, maxBytes: 500 * 1024, kind: 'upload' })).rejects.toMatchObject({ status: 413 });
    expect(await chunks().estimatedDocumentCount()).toBe(before);
  });
});

describe('blob store on files', () => {
  let dir: string;
  let files: FileBlobStore;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
    files = new FileBlobStore(db, dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  /** Every file under the directory, temporary ones included. */
  const onDisk = (): string[] => (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile());
  const records = () => db.collection(`${BLOB_BUCKET}.files`);

  it('stores a blob as one file with its record, streams it back whole, and deletes both', async () => {
    const data = randomBytes(1_500_000 + 3);
    const info = await files.put(pieces(data), { filename: 'report.pdf', contentType: 'application/pdf', userId, maxBytes: 10 * 1024 * 1024, kind: 'download' });
    expect(info).toMatchObject({ size: data.length, userId, filename: 'report.pdf', contentType: 'application/pdf' });
    expect(onDisk()).toEqual([path.join(info.blobId.slice(-2), info.blobId)]);
    expect(await records().findOne({ _id: info.blobId as never })).toMatchObject({ length: data.length, metadata: { userId, kind: 'download' } });
    // no chunks in the database
    expect(await chunks().countDocuments({ files_id: info.blobId })).toBe(0);
    expect((await buffer(await files.get(info.blobId))).equals(data)).toBe(true);
    expect(await files.stat(info.blobId)).toMatchObject({ size: data.length, userId });
    expect(await files.usage(userId)).toBeGreaterThanOrEqual(data.length);
    await files.delete(info.blobId);
    expect(onDisk()).toEqual([]);
    expect(await files.stat(info.blobId)).toBeNull();
    await expect(files.get(info.blobId)).rejects.toMatchObject({ status: 404 });
    await files.delete(info.blobId);
  });

  it('refuses a blob past its cap leaving no file and no record; a record whose file is gone is a 404', async () => {
    const before = await records().countDocuments();
    await expect(files.put(pieces(randomBytes(600 * 1024)), { filename: 'big', contentType: 'application/octet-stream', userId, maxBytes: 500 * 1024, kind: 'upload' })).rejects.toMatchObject({ status: 413 });
    expect(onDisk()).toEqual([]);
    expect(await records().countDocuments()).toBe(before);

    const lost = await files.put(Readable.from([Buffer.from('x')]), { filename: 'x', contentType: 'text/plain', userId, maxBytes: 10, kind: 'upload' });
    fs.rmSync(path.join(dir, lost.blobId.slice(-2), lost.blobId));
    await expect(files.get(lost.blobId)).rejects.toMatchObject({ status: 404 });
    await files.delete(lost.blobId);
    // an id of another shape never becomes a path
    await expect(files.get('../../etc/passwd')).rejects.toMatchObject({ status: 404 });
  });

  it("keeps each user's stored bytes as a count that follows puts and deletes, concurrent ones too", async () => {
    const owner = `usr_count${Date.now()}`;
    const other = `usr_other${Date.now()}`;
    const put = (bytes: number, who = owner) => files.put(Readable.from([randomBytes(bytes)]), { filename: 'f', contentType: 'application/octet-stream', userId: who, maxBytes: 1024 * 1024, kind: 'download' });
    // blobs stored before the user had a count: the first reading sums the records once
    const early = await put(1000);
    await db.collection('blobUsage').deleteOne({ _id: owner as never });
    expect(await files.usage(owner)).toBe(1000);
    expect(await db.collection('blobUsage').findOne({ _id: owner as never })).toMatchObject({ bytes: 1000 });
    // twelve at once (four of another user): none lost, none counted twice
    const many = await Promise.all([...Array.from({ length: 8 }, (_, i) => put(100 + i)), ...Array.from({ length: 4 }, () => put(50, other))]);
    expect(await files.usage(owner)).toBe(1000 + 8 * 100 + 28);
    expect(await files.usage(other)).toBe(200);
    await Promise.all([files.delete(early.blobId), files.delete(many[0].blobId), files.delete(many[0].blobId)]);
    expect(await files.usage(owner)).toBe(8 * 100 + 28 - 100);
    // the count agrees with the records
    const [sum] = await records().aggregate<{ t: number }>([{ $match: { 'metadata.userId': owner } }, { $group: { _id: null, t: { $sum: '$length' } } }]).toArray();
    expect(sum.t).toBe(8 * 100 + 28 - 100);
    await Promise.all(many.slice(1).map((b) => files.delete(b.blobId)));
    expect(await files.usage(owner)).toBe(0);
    expect(await files.usage(other)).toBe(0);
  });

  it('stores a whole blob within a limit only when it fits beside what is stored and reserved, leaving nothing when it does not', async () => {
    const owner = `usr_within${Date.now()}`;
    let reserved = 0;
    const within = { limit: 1000, reserved: async () => reserved, exceeded: () => Object.assign(new Error('quota'), { status: 413 }) };
    const put = (bytes: number) => files.put(Readable.from([randomBytes(bytes)]), { filename: 'p.jpg', contentType: 'image/jpeg', userId: owner, maxBytes: 5000, kind: 'picture', within });
    const first = await put(600);
    const filesBefore = onDisk().length;
    const recordsBefore = await records().countDocuments();
    // 600 stored + 300 reserved by a stream in flight + 200 > 1000
    reserved = 300;
    await expect(put(200)).rejects.toMatchObject({ status: 413 });
    expect(onDisk()).toHaveLength(filesBefore);
    expect(await records().countDocuments()).toBe(recordsBefore);
    expect(await files.usage(owner)).toBe(600);
    // 600 + 300 + 100 = 1000 fits; racing ones never pass the limit together
    const raced = await Promise.allSettled([put(100), put(100), put(100)]);
    expect(raced.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(await files.usage(owner)).toBe(700);
    await files.delete(first.blobId);
    for (const r of raced) if (r.status === 'fulfilled') await files.delete(r.value.blobId);
    expect(await files.usage(owner)).toBe(0);
  });

  it('stores several whole blobs under one count, keeping in order those that fit and leaving no trace of the rest', async () => {
    const owner = `usr_many${Date.now()}`;
    let reserved = 100;
    const within = { limit: 1000, reserved: async () => reserved };
    const data = [300, 400, 5000, 250, 100].map((n) => randomBytes(n));
    const filesBefore = onDisk().length;
    const recordsBefore = await records().countDocuments();
    const meta = { contentType: 'image/jpeg', userId: owner, maxBytes: 4000, kind: 'picture', within };
    const stored = await files.putWholeMany(
      data.map((d, i) => ({ data: d, filename: `step-${i}.jpg` })),
      meta,
    );
    // 100 reserved + 300 + 400 fit (800); 5000 is past the cap; 250 would make 1050; 100 fits (900)
    expect(stored.map((b) => b?.size)).toEqual([300, 400, undefined, undefined, 100]);
    expect(await files.usage(owner)).toBe(800);
    expect(onDisk()).toHaveLength(filesBefore + 3);
    expect(await records().countDocuments()).toBe(recordsBefore + 3);
    for (const [i, b] of stored.entries()) if (b) expect((await buffer(await files.get(b.blobId))).equals(data[i])).toBe(true);
    // none fits (800 stored + 150 reserved + 100): nothing written, nothing counted
    reserved = 150;
    expect(await files.putWholeMany([{ data: randomBytes(100), filename: 'x.jpg' }], meta)).toEqual([undefined]);
    expect(onDisk()).toHaveLength(filesBefore + 3);
    expect(await files.usage(owner)).toBe(800);
    for (const b of stored) if (b) await files.delete(b.blobId);
    expect(await files.usage(owner)).toBe(0);
    expect(onDisk()).toHaveLength(filesBefore);
  });
});
