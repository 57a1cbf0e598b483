/**
 * Signed links: file downloads and a session's live view. The secret comes from
 * files/links.ts (`linkSecret`), shared by every process of one installation.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TaskFile } from './session-types';

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

/** Where file links point (`PUBLIC_BASE_URL`) and the secret that signs them. */
export interface FileLinks {
  baseUrl: string;
  secret: string;
}

/** data.files[] of the contract, with a download link valid for an hour. */
export function linkedFiles(links: FileLinks, files: TaskFile[] | undefined, now = Date.now()) {
  return (files ?? []).map((f) => ({
    source: f.source,
    downloadUrl: `${links.baseUrl}/files/${f.fileId}/download?token=${signFileLink(links.secret, f.fileId, now + FILE_LINK_TTL_MS)}`,
    filename: f.filename,
    timestamp: f.timestamp,
  }));
}

/** The capability in a session's live view and WHEP links. */
export function sessionViewToken(secret: string, sessionId: string): string {
  return mac(secret, `view:${sessionId}`);
}
