import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

const ENCODING = 'binary/encrypted';
const KEY_ID = 'k1';

/**
 * Encrypts every payload (task prompts, guardrail answers, results) with AES-256-GCM
 * before it reaches Temporal, so its history never holds them in plain text.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('payload encryption key must be 32 bytes');
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', this.key, iv);
      const plain = temporal.api.common.v1.Payload.encode(p).finish();
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { encoding: Buffer.from(ENCODING), 'encryption-key-id': Buffer.from(KEY_ID) }, data };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      if (Buffer.from(p.metadata?.encoding ?? []).toString() !== ENCODING || !p.data) return p;
      const buf = Buffer.from(p.data);
      const decipher = createDecipheriv('aes-256-gcm', this.key, buf.subarray(0, 12));
      decipher.setAuthTag(buf.subarray(buf.length - 16));
      const plain = Buffer.concat([decipher.update(buf.subarray(12, buf.length - 16)), decipher.final()]);
      return temporal.api.common.v1.Payload.decode(plain);
    });
  }
}
