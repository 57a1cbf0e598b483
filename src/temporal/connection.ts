import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { Config } from '../config';
import { EncryptionCodec } from './codec';

/**
 * The payload key: from configuration, or for the embedded default a key generated once
 * under DATA_DIR (every process of one installation shares it).
 */
export function payloadKey(config: Config): Buffer {
  if (config.PAYLOAD_ENCRYPTION_KEY) return Buffer.from(config.PAYLOAD_ENCRYPTION_KEY, 'hex');
  const file = path.join(config.DATA_DIR, 'payload.key');
  if (!existsSync(file)) {
    mkdirSync(config.DATA_DIR, { recursive: true });
    try {
      writeFileSync(file, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

/**
 * The data converter of every client and worker: payloads encrypted by the codec, and
 * failure messages and stack traces encoded into a payload first (failure-converter.ts),
 * so neither reaches Temporal in clear.
 */
export function dataConverter(config: Config): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(payloadKey(config))], failureConverterPath: FAILURE_CONVERTER_PATH };
}

export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

export async function connectTemporal(config: Config): Promise<{ connection: Connection; client: Client }> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter: dataConverter(config) });
  return { connection, client };
}
