/**
 * Blob reads as storage grows: a 1.5 MB blob read back (what a download link does) with
 * little stored and with 500 MB stored, for blobs as files (BLOB_STORE=files, the embedded
 * default) and for GridFS on the same database (FerretDB here). Writes JSON to
 * BENCH_BLOB_OUT (scripts/bench.sh prints it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { MongoClient } from 'mongodb';
import { GridFsBlobStore } from '../src/store/blobs';
import { FileBlobStore } from '../src/store/file-blobs';
import type { BlobStore } from '../src/contracts/profiles';
import { ROOT } from '../test/support/service';

const MB = 1024 * 1024;
const FILES_STORED_MB = Number(process.env.BENCH_BLOB_FILES_MB ?? 500);
/** GridFS on FerretDB writes slowly: fewer megabytes show how its reads grow. */
const GRIDFS_STORED_MB = Number(process.env.BENCH_BLOB_GRIDFS_MB ?? 100);
const READS = 10;

const p50 = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] * 10) / 10;
const meta = (name: string) => ({ filename: name, contentType: 'application/octet-stream', userId: 'usr_bench', maxBytes: 10 * MB, kind: 'download' });

async function readTimes(store: BlobStore, blobId: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < READS; i++) {
    const t0 = performance.now();
    const data = await buffer(await store.get(blobId));
    times.push(performance.now() - t0);
    if (data.length !== 1.5 * MB) throw new Error(`read ${data.length} bytes`);
  }
  return p50(times);
}

/** Fills the store up to `mb` in 5 MB blobs, measuring reads of one 1.5 MB blob at the start and at the end. */
async function measure(store: BlobStore, mb: number): Promise<{ storedMb: number; readP50Ms: { empty: number; full: number }; writeMbPerS: number }> {
  const probe = await store.put(Readable.from([randomBytes(1.5 * MB)]), meta('probe.bin'));
  const empty = await readTimes(store, probe.blobId);
  const chunk = randomBytes(5 * MB);
  const t0 = performance.now();
  for (let stored = 0; stored < mb; stored += 5) await store.put(Readable.from([chunk]), meta(`fill-${stored}.bin`));
  const writeS = (performance.now() - t0) / 1000;
  const full = await readTimes(store, probe.blobId);
  return { storedMb: mb, readP50Ms: { empty, full }, writeMbPerS: Math.round((mb / writeS) * 10) / 10 };
}

it('blob reads as storage grows', async () => {
  const mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27029/browser_agent_bench');
  const dir = fs.mkdtempSync(path.join(process.env.DATA_DIR ?? os.tmpdir(), 'blob-bench-'));
  const filesDb = mongo.db(`blob_bench_files_${Date.now()}`);
  const gridDb = mongo.db(`blob_bench_gridfs_${Date.now()}`);
  try {
    const files = await measure(new FileBlobStore(filesDb, dir), FILES_STORED_MB);
    const gridfs = await measure(new GridFsBlobStore(gridDb), GRIDFS_STORED_MB);
    const out = { benchmark: 'blob-read', blobMb: 1.5, reads: READS, files, gridfs };
    fs.writeFileSync(process.env.BENCH_BLOB_OUT ?? path.join(ROOT, '.data/bench-blob.json'), JSON.stringify(out, null, 2));
  } finally {
    await filesDb.dropDatabase().catch(() => undefined);
    await gridDb.dropDatabase().catch(() => undefined);
    await mongo.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 1_800_000);
