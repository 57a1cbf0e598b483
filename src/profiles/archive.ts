/**
 * Browser profile archives (.tar.gz): validated while an upload streams, extracted on a
 * worker before Chromium starts, created from the profile directory when a session ends.
 * Nothing here trusts the archive: every path and link must stay inside the root.
 */
import { constants as fsc, promises as fsp, createReadStream } from 'node:fs';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { ServiceError } from '../contracts/errors';
import { ArchivePaths, InvalidArchiveError, type EntryKind } from './archive-paths';

export { InvalidArchiveError };

/**
 * Chromium's lock files of a running instance. They are meaningless elsewhere (and a
 * SingletonLock naming another host makes Chromium refuse the profile), and
 * SingletonSocket points to an absolute /tmp path, so they are neither packed nor unpacked.
 */
const RUNTIME_FILES = new Set(['SingletonLock', 'SingletonSocket', 'SingletonCookie']);
const isRuntimeFile = (name: string) => RUNTIME_FILES.has(path.posix.basename(name));

/** Every path is remembered while validating (ArchivePaths), so entries, names and their total are bounded. */
const MAX_ENTRIES = 250_000;
const MAX_NAME_BYTES = 4096;
const MAX_NAME_CHARS_TOTAL = 32 * 1024 * 1024;
type EntryHeader = Partial<tar.Header> & { name: string };

/**
 * What gunzip may inflate is bounded, not only the sizes the entries declare: zero blocks
 * (tar-stream skips them), data after the end of the tar and the bodies of entries that are
 * drained (links, lock files) are inflated too. Each entry counted against the limits may
 * bring its file's bytes plus ENTRY_OVERHEAD and its name and link target: its 512-byte
 * header, the padding of its data to 512 bytes, and pax or GNU long-name headers (a header
 * block, the names and attributes, padding) before it.
 */
const ENTRY_OVERHEAD = 4096;
/**
 * Inflated bytes that no counted entry accounts for: the end-of-archive blocks and the padding
 * of the last record (10 KB with GNU tar), the few entries skipped (the root, Chromium lock
 * files), and what the streams have buffered ahead of the entry being read (well under this).
 */
const INFLATE_SLACK = 1024 * 1024;

/**
 * Reads a .tar.gz stream and checks every entry; with `destDir` it also lays the files out
 * there (the directory should be new or empty; on a rejection the caller removes it).
 * Rejects with 400 INVALID_ARCHIVE for anything that is not a safe gzip'd tar, and with 413
 * when the entries add up to more than `maxBytes`, or the gzip data inflates to more than
 * the entries read so far account for (a decompression bomb): reading stops there, so at
 * most about `maxBytes` plus the entries' headers is ever inflated.
 */
export async function validateAndExtract(input: Readable, destDir: string | null, opts: { maxBytes: number; maxEntries?: number }): Promise<{ entries: number; bytes: number }> {
  const maxEntries = opts.maxEntries ?? MAX_ENTRIES;
  const root = destDir ? path.resolve(destDir) : null;
  if (root) await fsp.mkdir(root, { recursive: true });
  const realRoot = root ? await fsp.realpath(root) : null;

  let inputBytes = 0;
  // The first failure upstream of the tar parser: the input's own error is passed on as it is.
  let upstreamFailure: Error | undefined;
  const counter = new PassThrough();
  let head = Buffer.alloc(0);
  counter.on('data', (c: Buffer) => {
    if (head.length < 2) head = Buffer.concat([head, c.subarray(0, 2)]);
    inputBytes += c.length;
  });
  const gunzip = zlib.createGunzip();
  const extract = tar.extract();
  const stop = (err: Error) => {
    upstreamFailure ??= err;
    extract.destroy(err);
  };
  input.on('error', (err) => stop(err instanceof ServiceError ? err : Object.assign(err, { fromInput: true })));
  gunzip.on('error', (err) => stop(gzipError(err, inputBytes, head[0] === 0x1f && head[1] === 0x8b)));

  // Every inflated byte counts, whatever the tar parser does with it. The budget grows as
  // entries are read (see ENTRY_OVERHEAD); registered before the pipe, so the chunk that
  // passes it never reaches the parser.
  let bytes = 0;
  let inflated = 0;
  let budget = INFLATE_SLACK;
  const onInflated = (c: Buffer) => {
    inflated += c.length;
    if (inflated <= budget) return;
    gunzip.off('data', onInflated);
    stop(new ServiceError('PAYLOAD_TOO_LARGE', `The archive expands to more than its entries hold (over ${budget} bytes of tar for ${bytes} bytes of files)`, { maxBytes: opts.maxBytes }));
    input.unpipe(counter);
    counter.unpipe(gunzip);
    gunzip.destroy();
  };
  gunzip.on('data', onInflated);
  input.pipe(counter).pipe(gunzip).pipe(extract as unknown as NodeJS.WritableStream);

  // Implicit directories (paths only crossed by deeper entries) count too, hence twice the entries.
  const paths = new ArchivePaths({ maxNodes: 2 * maxEntries, maxNameChars: MAX_NAME_CHARS_TOTAL });
  // Parent directories made and checked once, not once per file under them.
  const checkedDirs = new Set<string>();
  let entries = 0;
  try {
    for await (const entry of extract) {
      const header = entry.header;
      const segments = entryPath(header.name);
      const name = segments.join('/');
      const type = header.type ?? 'file';
      if (name === '' || isRuntimeFile(name)) {
        await drain(entry);
        continue;
      }
      if (++entries > maxEntries) throw new InvalidArchiveError(`The archive has more than ${maxEntries} entries`, { maxEntries });
      // The name is at most MAX_NAME_BYTES (entryPath), the link target is counted up to that: at most 12 KB an entry.
      budget += ENTRY_OVERHEAD + Buffer.byteLength(header.name) + Math.min(Buffer.byteLength(header.linkname ?? ''), MAX_NAME_BYTES);
      const kind: EntryKind | undefined = type === 'file' || type === 'contiguous-file' ? 'file' : type === 'directory' || type === 'symlink' || type === 'link' ? type : undefined;
      if (!kind) throw new InvalidArchiveError(`Entry "${name}" has an unsupported type (${type}); only files, directories and links are allowed`, { entry: name });
      if (kind === 'symlink') symlinkTarget(name, header.linkname ?? '');
      // A hard link's target must be an earlier file (looked up before this entry is recorded).
      const linkTarget = kind === 'link' ? entryPath(header.linkname ?? '') : undefined;
      if (linkTarget !== undefined) {
        const targetKind = linkTarget.join('/') === name ? undefined : paths.kindOf(linkTarget);
        if (targetKind !== 'file' && targetKind !== 'link') throw new InvalidArchiveError(`Hard link "${name}" must point to an earlier file of the archive (points to "${header.linkname}")`, { entry: name });
      }
      paths.add(name, segments, kind, header.linkname);

      if (kind === 'file') {
        const size = header.size ?? 0;
        bytes += size;
        if (bytes > opts.maxBytes) throw new ServiceError('PAYLOAD_TOO_LARGE', `The archive expands to more than ${opts.maxBytes} bytes`, { maxBytes: opts.maxBytes });
        budget += size;
        if (realRoot) await writeFile(realRoot, name, entry as AsyncIterable<Uint8Array>, header.mode, header.mtime, checkedDirs);
        else await drain(entry);
        continue;
      }
      await drain(entry);
      if (kind === 'directory') {
        if (realRoot) await fsp.mkdir(path.join(realRoot, name), { recursive: true, mode: ((header.mode ?? 0o755) & 0o777) | 0o700 });
      } else if (kind === 'symlink') {
        const target = header.linkname ?? '';
        if (realRoot) {
          await ensureParent(realRoot, name, checkedDirs);
          await removeIfPresent(path.join(realRoot, name));
          await fsp.symlink(target, path.join(realRoot, name));
        }
      } else {
        const target = linkTarget!.join('/');
        if (realRoot) {
          await ensureParent(realRoot, name, checkedDirs);
          await removeIfPresent(path.join(realRoot, name));
          await fsp.link(path.join(realRoot, target), path.join(realRoot, name));
        }
      }
    }
  } catch (err) {
    input.unpipe(counter);
    counter.destroy();
    gunzip.destroy();
    throw archiveError(upstreamFailure ?? err, entries);
  }
  if (upstreamFailure) throw archiveError(upstreamFailure, entries);
  // gunzip stops at the end of the gzip data; whatever follows (padding) is read and dropped,
  // so a stream shared with another consumer is never left stalled.
  input.unpipe(counter);
  input.resume();
  await finished(input, { writable: false }).catch((err: Error) => {
    throw archiveError(err instanceof ServiceError ? err : Object.assign(err, { fromInput: true }), entries);
  });
  if (entries === 0) throw new InvalidArchiveError('The archive has no entries');
  // A link's meaning can change with links that come later in the archive, so chains are checked at the end.
  paths.checkSymlinkChains();
  return { entries, bytes };
}

/**
 * A .tar.gz stream of a directory: regular files, directories, and symbolic links that stay
 * inside it, except what `exclude` names (a directory excluded is skipped whole). The stream
 * fails with 413 when the files add up to more than `maxBytes` (what could not be unpacked).
 */
export function createArchive(srcDir: string, opts: { level?: number; exclude?: (relPath: string) => boolean; maxBytes?: number } = {}): Readable {
  const root = path.resolve(srcDir);
  const pack = tar.pack();
  const gzip = zlib.createGzip({ level: opts.level ?? 6 });
  (pack as unknown as NodeJS.ReadableStream).pipe(gzip);

  const add = (header: EntryHeader, content?: Buffer) =>
    new Promise<void>((resolve, reject) => {
      pack.entry(header, content ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve()));
    });
  const addFile = async (header: EntryHeader, file: string) => {
    const size = header.size ?? 0;
    const done = new Promise<void>((resolve, reject) => {
      const sink = pack.entry(header, (err) => (err ? reject(err) : resolve()));
      void (async () => {
        if (size > 0) {
          // Reads exactly the size in the header (a file growing meanwhile is cut there).
          for await (const chunk of createReadStream(file, { start: 0, end: size - 1 })) {
            if (!sink.write(chunk)) await new Promise<void>((r) => sink.once('drain', () => r()));
          }
        }
        (sink as unknown as { end(): void }).end();
      })().catch((err: Error) => sink.destroy(err));
    });
    await done;
  };

  let total = 0;
  const walk = async (rel: string): Promise<void> => {
    const dir = path.join(root, rel);
    const names = (await fsp.readdir(dir)).sort();
    for (const base of names) {
      const name = rel ? `${rel}/${base}` : base;
      if (isRuntimeFile(name) || opts.exclude?.(name)) continue;
      const abs = path.join(dir, base);
      let st;
      try {
        st = await fsp.lstat(abs);
      } catch {
        continue; // removed while walking
      }
      const mode = st.mode & 0o777;
      if (st.isDirectory()) {
        await add({ name: `${name}/`, type: 'directory', mode, mtime: st.mtime });
        await walk(name);
      } else if (st.isFile()) {
        total += st.size;
        if (opts.maxBytes !== undefined && total > opts.maxBytes) throw new ServiceError('PAYLOAD_TOO_LARGE', `The profile's files add up to more than ${opts.maxBytes} bytes`, { maxBytes: opts.maxBytes });
        await addFile({ name, type: 'file', size: st.size, mode, mtime: st.mtime }, abs);
      } else if (st.isSymbolicLink()) {
        const target = await fsp.readlink(abs);
        if (staysInside(name, target)) await add({ name, type: 'symlink', linkname: target, mode, mtime: st.mtime });
      }
      // sockets, FIFOs and devices have no place in an archive
    }
  };

  walk('')
    .then(() => pack.finalize())
    .catch((err: Error) => {
      gzip.destroy(err);
      pack.destroy();
    });
  return gzip;
}

/** The entry's path relative to the root as segments (none for the root itself); rejects absolute and escaping paths. */
function entryPath(raw: string): string[] {
  if (raw.includes('\0')) throw new InvalidArchiveError('An entry name contains a NUL character');
  if (Buffer.byteLength(raw) > MAX_NAME_BYTES) throw new InvalidArchiveError(`An entry name is longer than ${MAX_NAME_BYTES} bytes`);
  if (raw.startsWith('/')) throw new InvalidArchiveError(`Entry "${raw}" has an absolute path`, { entry: raw });
  // One pass: without "..", normalising is dropping empty and "." segments.
  const segments: string[] = [];
  for (const seg of raw.split('/')) {
    if (seg === '..') throw new InvalidArchiveError(`Entry "${raw}" escapes the archive root`, { entry: raw });
    if (seg && seg !== '.') segments.push(seg);
  }
  return segments;
}

function staysInside(name: string, target: string): boolean {
  if (!target || target.includes('\0') || path.posix.isAbsolute(target)) return false;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(name), target));
  return resolved !== '..' && !resolved.startsWith('../');
}

function symlinkTarget(name: string, target: string): void {
  if (Buffer.byteLength(target) > MAX_NAME_BYTES) throw new InvalidArchiveError(`Symbolic link "${name}" has a target longer than ${MAX_NAME_BYTES} bytes`, { entry: name });
  if (!target) throw new InvalidArchiveError(`Symbolic link "${name}" has no target`, { entry: name });
  if (!staysInside(name, target)) throw new InvalidArchiveError(`Symbolic link "${name}" points outside the archive root (to "${target}")`, { entry: name, target });
}

async function drain(entry: AsyncIterable<unknown>): Promise<void> {
  for await (const _chunk of entry) {
    /* discarded */
  }
}

async function ensureParent(root: string, name: string, checked: Set<string>): Promise<void> {
  const parent = path.dirname(path.join(root, name));
  if (checked.has(parent)) return;
  await fsp.mkdir(parent, { recursive: true });
  // Belt and braces: the parent must really be inside the root.
  const real = await fsp.realpath(parent);
  if (real !== root && !real.startsWith(root + path.sep)) throw new InvalidArchiveError(`Entry "${name}" escapes the archive root`, { entry: name });
  checked.add(parent);
}

async function removeIfPresent(p: string): Promise<void> {
  const st = await fsp.lstat(p).catch(() => null);
  if (st && !st.isDirectory()) await fsp.unlink(p);
}

async function writeFile(root: string, name: string, entry: AsyncIterable<Uint8Array>, mode: number | undefined, mtime: Date | undefined, checked: Set<string>): Promise<void> {
  await ensureParent(root, name, checked);
  const file = path.join(root, name);
  await removeIfPresent(file);
  // O_NOFOLLOW: never write through a link, whatever is on disk.
  const fh = await fsp.open(file, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_NOFOLLOW, ((mode ?? 0o644) & 0o777) | 0o600);
  try {
    for await (const chunk of entry) await fh.write(chunk);
    if (mtime) await fh.utimes(mtime, mtime);
  } finally {
    await fh.close();
  }
}

function gzipError(err: Error & { code?: string }, inputBytes: number, startsAsGzip: boolean): Error {
  if (inputBytes === 0) return new InvalidArchiveError('The file is empty; expected a .tar.gz archive');
  if (err.code === 'Z_DATA_ERROR' && /header check/i.test(err.message) && startsAsGzip) return new InvalidArchiveError('The gzip data is corrupt or followed by data that is not gzip');
  if (err.code === 'Z_DATA_ERROR' && /header check/i.test(err.message)) return new InvalidArchiveError('The file is not gzip-compressed; expected a .tar.gz archive');
  return new InvalidArchiveError(`The gzip data is corrupt or truncated (${err.message})`);
}

function archiveError(err: unknown, entries: number): Error {
  if (err instanceof ServiceError || (err as { fromInput?: boolean })?.fromInput) return err as Error;
  const message = err instanceof Error ? err.message : String(err);
  if (entries === 0) return new InvalidArchiveError(`The file is not a tar archive (${message})`);
  return new InvalidArchiveError(`The archive is corrupt or truncated after ${entries} entries (${message})`);
}
