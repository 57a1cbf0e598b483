/**
 * Browser profile archives (.tar.gz): validated while an upload streams, extracted on a
 * worker before Chromium starts, created from the profile directory when a session ends.
 * Nothing here trusts the archive: every path and link must stay inside the root.
 */
import { constants as fsc, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type tar from 'tar-stream';
import { ServiceError } from '../contracts/errors';
import { InflatingInput, inputError, type InflateTally } from './archive-inflate';
import { isRuntimeFile, staysInside } from './archive-pack';
import { ArchivePaths, InvalidArchiveError, type EntryKind } from './archive-paths';

export { InvalidArchiveError };
export { createArchive } from './archive-pack';

/** Every path is remembered while validating (ArchivePaths), so entries, names and their total are bounded. */
const MAX_ENTRIES = 250_000;
const MAX_NAME_BYTES = 4096;
const MAX_NAME_CHARS_TOTAL = 32 * 1024 * 1024;

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

  // The budget grows as entries are read (see ENTRY_OVERHEAD).
  const tally: EntryTally = { entries: 0, bytes: 0, budget: INFLATE_SLACK };
  const inflating = new InflatingInput(input, tally, opts.maxBytes);
  const reader = new EntryReader(realRoot, tally, { maxBytes: opts.maxBytes, maxEntries });
  try {
    for await (const entry of inflating.extract) await reader.read(entry);
  } catch (err) {
    inflating.abort();
    throw archiveError(inflating.upstreamFailure ?? err, tally.entries);
  }
  if (inflating.upstreamFailure) throw archiveError(inflating.upstreamFailure, tally.entries);
  await inflating.readToEnd().catch((err: Error) => {
    throw archiveError(inputError(err), tally.entries);
  });
  if (tally.entries === 0) throw new InvalidArchiveError('The archive has no entries');
  // A link's meaning can change with links that come later in the archive, so chains are checked at the end.
  reader.paths.checkSymlinkChains();
  return { entries: tally.entries, bytes: tally.bytes };
}

/** What the entries read so far account for: their number, the bytes of their files and how many bytes gunzip may inflate. */
interface EntryTally extends InflateTally {
  entries: number;
}

/** One entry as the tar parser gives it: its header and a stream of its data. */
type TarEntry = tar.Extract extends AsyncIterable<infer Entry> ? Entry : never;

/** Checks each entry of an archive as it is read and, given a root, lays it out there. */
class EntryReader {
  readonly paths: ArchivePaths;
  /** Parent directories made and checked once, not once per file under them. */
  private readonly checkedDirs = new Set<string>();

  constructor(
    private readonly realRoot: string | null,
    private readonly tally: EntryTally,
    private readonly limits: { maxBytes: number; maxEntries: number },
  ) {
    // Implicit directories (paths only crossed by deeper entries) count too, hence twice the entries.
    this.paths = new ArchivePaths({ maxNodes: 2 * limits.maxEntries, maxNameChars: MAX_NAME_CHARS_TOTAL });
  }

  async read(entry: TarEntry): Promise<void> {
    const { header } = entry;
    const segments = entryPath(header.name);
    const name = segments.join('/');
    if (name === '' || isRuntimeFile(name)) return drain(entry);
    const { tally, limits } = this;
    if (++tally.entries > limits.maxEntries) throw new InvalidArchiveError(`The archive has more than ${limits.maxEntries} entries`, { maxEntries: limits.maxEntries });
    // The name is at most MAX_NAME_BYTES (entryPath), the link target is counted up to that: at most 12 KB an entry.
    tally.budget += ENTRY_OVERHEAD + Buffer.byteLength(header.name) + Math.min(Buffer.byteLength(header.linkname ?? ''), MAX_NAME_BYTES);
    const kind = entryKind(name, header.type ?? 'file');
    if (kind === 'symlink') symlinkTarget(name, header.linkname ?? '');
    // A hard link's target must be an earlier file (looked up before this entry is recorded).
    const linkTarget = kind === 'link' ? this.hardLinkTarget(name, header.linkname) : undefined;
    this.paths.add(name, segments, kind, header.linkname);
    if (kind === 'file') return this.readFile(entry, name);
    await drain(entry);
    if (this.realRoot) await this.layOut(this.realRoot, name, kind, header, linkTarget);
  }

  private hardLinkTarget(name: string, linkname: string | undefined): string {
    const target = entryPath(linkname ?? '');
    const targetKind = target.join('/') === name ? undefined : this.paths.kindOf(target);
    if (targetKind !== 'file' && targetKind !== 'link') throw new InvalidArchiveError(`Hard link "${name}" must point to an earlier file of the archive (points to "${linkname}")`, { entry: name });
    return target.join('/');
  }

  private async readFile(entry: TarEntry, name: string): Promise<void> {
    const { header } = entry;
    const size = header.size ?? 0;
    this.tally.bytes += size;
    if (this.tally.bytes > this.limits.maxBytes) throw new ServiceError('PAYLOAD_TOO_LARGE', `The archive expands to more than ${this.limits.maxBytes} bytes`, { maxBytes: this.limits.maxBytes });
    this.tally.budget += size;
    if (this.realRoot) await writeFile(this.realRoot, name, entry as AsyncIterable<Uint8Array>, header.mode, header.mtime, this.checkedDirs);
    else await drain(entry);
  }

  /** Makes a directory, a symbolic link or a hard link (to `linkTarget`) under the root. */
  private async layOut(root: string, name: string, kind: Exclude<EntryKind, 'file'>, header: tar.Header, linkTarget: string | undefined): Promise<void> {
    if (kind === 'directory') {
      await fsp.mkdir(path.join(root, name), { recursive: true, mode: ((header.mode ?? 0o755) & 0o777) | 0o700 });
      return;
    }
    await ensureParent(root, name, this.checkedDirs);
    await removeIfPresent(path.join(root, name));
    if (kind === 'symlink') await fsp.symlink(header.linkname ?? '', path.join(root, name));
    else await fsp.link(path.join(root, linkTarget!), path.join(root, name));
  }
}

/** The kind of an entry of the given tar type; rejects any type but files, directories and links. */
function entryKind(name: string, type: string): EntryKind {
  const kind: EntryKind | undefined = type === 'file' || type === 'contiguous-file' ? 'file' : type === 'directory' || type === 'symlink' || type === 'link' ? type : undefined;
  if (!kind) throw new InvalidArchiveError(`Entry "${name}" has an unsupported type (${type}); only files, directories and links are allowed`, { entry: name });
  return kind;
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

function archiveError(err: unknown, entries: number): Error {
  if (err instanceof ServiceError || (err as { fromInput?: boolean })?.fromInput) return err as Error;
  const message = err instanceof Error ? err.message : String(err);
  if (entries === 0) return new InvalidArchiveError(`The file is not a tar archive (${message})`);
  return new InvalidArchiveError(`The archive is corrupt or truncated after ${entries} entries (${message})`);
}
