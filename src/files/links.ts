import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import type { TaskFile } from '../workflows/types';

/** The file under DATA_DIR holding the generated link secret. */
export const LINK_SECRET_FILE = 'view-token.secret';
const generated = new Map<string, string>();

/**
 * Signed links (file downloads, the live view and WHEP) need one secret shared by every API
 * instance and worker: `VIEW_TOKEN_SECRET`, or else 32 random bytes generated once and kept
 * in DATA_DIR (mode 0600), which every process of one installation shares. It is never
 * derived from anything guessable, and never the payload encryption key.
 */
export function linkSecret(config: Pick<Config, 'VIEW_TOKEN_SECRET' | 'DATA_DIR'>): string {
  if (config.VIEW_TOKEN_SECRET) return config.VIEW_TOKEN_SECRET;
  const file = path.resolve(config.DATA_DIR, LINK_SECRET_FILE);
  let secret = generated.get(file);
  if (!secret) {
    secret = readOrCreateSecret(file);
    generated.set(file, secret);
  }
  return secret;
}

function readOrCreateSecret(file: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  // Written aside, then linked into place: the file appears whole or not at all, and of
  // two processes starting at once the first link wins and both read the same secret.
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(aside, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
  try {
    linkSync(aside, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(aside);
  }
  chmodSync(file, 0o600);
  const secret = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(secret)) throw new Error(`${file} does not hold a link secret (64 hex characters); remove it to have a new one generated`);
  return secret;
}

export const FILE_LINK_TTL_MS = 60 * 60 * 1000;

const mac = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('base64url');

/** `<expiry ms>.<mac>`: anyone holding it may download that file until it expires. */
export function signFileLink(secret: string, fileId: string, expiresAt: number): string {
  return `${expiresAt}.${mac(secret, `file:${fileId}:${expiresAt}`)}`;
}

export function verifyFileLink(secret: string, fileId: string, token: string, now = Date.now()): boolean {
  const [exp, sig] = token.split('.');
  const expiresAt = Number(exp);
  if (!Number.isFinite(expiresAt) || expiresAt < now || !sig) return false;
  const want = Buffer.from(mac(secret, `file:${fileId}:${expiresAt}`));
  const got = Buffer.from(sig);
  return want.length === got.length && timingSafeEqual(want, got);
}

/** data.files[] of the contract, with a download link valid for an hour. */
export function wireFiles(config: Config, files: TaskFile[] | undefined, now = Date.now()) {
  const secret = linkSecret(config);
  return (files ?? []).map((f) => ({
    source: f.source,
    downloadUrl: `${config.PUBLIC_BASE_URL}/files/${f.fileId}/download?token=${signFileLink(secret, f.fileId, now + FILE_LINK_TTL_MS)}`,
    filename: f.filename,
    timestamp: f.timestamp,
  }));
}
