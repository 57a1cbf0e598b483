import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import type { TaskFile } from '../contracts/session-types';
import { linkedFiles, type FileLinks } from '../contracts/link-tokens';

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

/** Where file links point and the secret that signs them, for the contract's envelopes (contracts/link-tokens.ts). */
export function fileLinks(config: Pick<Config, 'VIEW_TOKEN_SECRET' | 'DATA_DIR' | 'PUBLIC_BASE_URL'>): FileLinks {
  return { baseUrl: config.PUBLIC_BASE_URL, secret: linkSecret(config) };
}

/** data.files[] of the contract, with a download link valid for an hour. */
export function wireFiles(config: Pick<Config, 'VIEW_TOKEN_SECRET' | 'DATA_DIR' | 'PUBLIC_BASE_URL'>, files: TaskFile[] | undefined, now = Date.now()) {
  return linkedFiles(fileLinks(config), files, now);
}
