import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config';
import type { TaskFile } from '../workflows/types';

/** Signed links (file downloads, the live view) need one secret shared by every API instance and worker. */
export function linkSecret(config: Config): string {
  return config.VIEW_TOKEN_SECRET ?? `${config.TEMPORAL_NAMESPACE}:${config.PAYLOAD_ENCRYPTION_KEY ?? config.DATA_DIR}`;
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
