/**
 * One-time codes from an authenticator seed (RFC 6238 TOTP over RFC 4226 HOTP), computed in
 * the worker at the moment the code is typed. The seed is a secret field's value
 * (`{"totp": "<base32>", "digits": 6, "period": 30}`); the code is masked like any secret.
 */
import { createHmac } from 'node:crypto';
import type { TotpSeed } from '../../contracts/session-types';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The bytes of a base32 seed (RFC 4648; spaces, dashes, padding and letter case ignored); null when it is not base32. */
export function base32Bytes(text: string): Buffer | null {
  const clean = text.replace(/[\s-]/g, '').replace(/=+$/, '').toUpperCase();
  if (!clean) return null;
  const out: number[] = [];
  let bits = 0;
  let acc = 0;
  for (const ch of clean) {
    const v = BASE32.indexOf(ch);
    if (v < 0) return null;
    acc = (acc << 5) | v;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >>> bits) & 0xff);
    }
  }
  return Buffer.from(out);
}

/** The code of `seed` valid at `atMs` (Unix milliseconds). */
export function totpCode(seed: TotpSeed, atMs: number): string {
  const key = base32Bytes(seed.totp);
  if (!key) throw new Error('the one-time code seed is not base32');
  const digits = seed.digits ?? 6;
  const period = seed.period ?? 30;
  const counter = Math.floor(atMs / 1000 / period);
  const message = Buffer.alloc(8);
  message.writeUInt32BE(Math.floor(counter / 2 ** 32), 0);
  message.writeUInt32BE(counter >>> 0, 4);
  const mac = createHmac((seed.algorithm ?? 'SHA1').toLowerCase(), key).update(message).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3];
  return String(binary % 10 ** digits).padStart(digits, '0');
}
