import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { ServiceError } from '../contracts/errors';

/**
 * Chromium's lock files of a running instance. They are meaningless elsewhere (and a
 * SingletonLock naming another host makes Chromium refuse the profile), and
 * SingletonSocket points to an absolute /tmp path, so they are neither packed nor unpacked.
 */
const RUNTIME_FILES = new Set(['SingletonLock', 'SingletonSocket', 'SingletonCookie']);
export const isRuntimeFile = (name: string) => RUNTIME_FILES.has(path.posix.basename(name));

type EntryHeader = Partial<tar.Header> & { name: string };
/** Where the data of one packed entry is written. */
type EntrySink = ReturnType<tar.Pack['entry']>;

export interface CreateArchiveOptions {
  level?: number;
  exclude?: (relPath: string) => boolean;
  maxBytes?: number;
}

/** One archive being packed: its directory, the pack, and the bytes of files packed so far. */
interface Packing {
  root: string;
  pack: tar.Pack;
  opts: CreateArchiveOptions;
  total: number;
}

/**
 * A .tar.gz stream of a directory: regular files, directories, and symbolic links that stay
 * inside it, except what `exclude` names (a directory excluded is skipped whole). The stream
 * fails with 413 when the files add up to more than `maxBytes` (what could not be unpacked).
 */
export function createArchive(srcDir: string, opts: CreateArchiveOptions = {}): Readable {
  const root = path.resolve(srcDir);
  const pack = tar.pack();
  const gzip = zlib.createGzip({ level: opts.level ?? 6 });
  (pack as unknown as NodeJS.ReadableStream).pipe(gzip);
  walk({ root, pack, opts, total: 0 }, '')
    .then(() => pack.finalize())
    .catch((err: Error) => {
      gzip.destroy(err);
      pack.destroy();
    });
  return gzip;
}

/** A symbolic link's target stays inside the directory it is packed or unpacked in. */
export function staysInside(name: string, target: string): boolean {
  if (!target || target.includes('\0') || path.posix.isAbsolute(target)) return false;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(name), target));
  return resolved !== '..' && !resolved.startsWith('../');
}

async function walk(packing: Packing, rel: string): Promise<void> {
  const dir = path.join(packing.root, rel);
  const names = (await fsp.readdir(dir)).sort();
  for (const base of names) {
    const name = rel ? `${rel}/${base}` : base;
    if (isRuntimeFile(name) || packing.opts.exclude?.(name)) continue;
    await packEntry(packing, name, path.join(dir, base));
  }
}

async function packEntry(packing: Packing, name: string, abs: string): Promise<void> {
  const { pack, opts } = packing;
  let st;
  try {
    st = await fsp.lstat(abs);
  } catch {
    return; // removed while walking
  }
  const mode = st.mode & 0o777;
  if (st.isDirectory()) {
    await addEntry(pack, { name: `${name}/`, type: 'directory', mode, mtime: st.mtime });
    await walk(packing, name);
  } else if (st.isFile()) {
    packing.total += st.size;
    if (opts.maxBytes !== undefined && packing.total > opts.maxBytes) throw new ServiceError('PAYLOAD_TOO_LARGE', `The profile's files add up to more than ${opts.maxBytes} bytes`, { maxBytes: opts.maxBytes });
    await addFile(pack, { name, type: 'file', size: st.size, mode, mtime: st.mtime }, abs);
  } else if (st.isSymbolicLink()) {
    const target = await fsp.readlink(abs);
    if (staysInside(name, target)) await addEntry(pack, { name, type: 'symlink', linkname: target, mode, mtime: st.mtime });
  }
  // sockets, FIFOs and devices have no place in an archive
}

function addEntry(pack: tar.Pack, header: EntryHeader, content?: Buffer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    pack.entry(header, content ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve()));
  });
}

async function addFile(pack: tar.Pack, header: EntryHeader, file: string): Promise<void> {
  const size = header.size ?? 0;
  const done = new Promise<void>((resolve, reject) => {
    const sink = pack.entry(header, (err) => (err ? reject(err) : resolve()));
    void copyFile(file, size, sink).catch((err: Error) => sink.destroy(err));
  });
  await done;
}

/** Reads exactly the size in the header into the entry (a file growing meanwhile is cut there). */
async function copyFile(file: string, size: number, sink: EntrySink): Promise<void> {
  if (size > 0) {
    for await (const chunk of createReadStream(file, { start: 0, end: size - 1 })) {
      if (!sink.write(chunk)) await new Promise<void>((r) => sink.once('drain', () => r()));
    }
  }
  (sink as unknown as { end(): void }).end();
}
