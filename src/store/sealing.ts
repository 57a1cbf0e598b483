import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * What a session keeps in the database to come back elsewhere (its browser's storage, its
 * tabs, the values it masks) is sealed with AES-256-GCM under the installation's payload
 * key: base64 of iv (12 bytes) | ciphertext | tag (16 bytes).
 */
export function seal(key: Buffer, value: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  return Buffer.concat([iv, cipher.update(JSON.stringify(value), 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64');
}

export function unseal<T>(key: Buffer, sealed: string): T {
  const buf = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, buf.subarray(0, 12));
  decipher.setAuthTag(buf.subarray(buf.length - 16));
  return JSON.parse(Buffer.concat([decipher.update(buf.subarray(12, buf.length - 16)), decipher.final()]).toString('utf8')) as T;
}

export function checkSealingKey(key: Buffer): void {
  if (key.length !== 32) throw new Error('the sealing key must be 32 bytes');
}
