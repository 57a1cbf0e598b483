/**
 * The chat user an environment reaches out to (reachOutMode): one provider's settings,
 * validated per provider. Tokens and webhook addresses are sealed with AES-256-GCM under a
 * key derived from the service's secret key, bound to the environment, and never sent back.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { CHAT_SCHEMAS, type ChatProvider, type StoredChatConnection } from '../contracts/schemas/chat-connection.schema';

const KEY_INFO = 'browser-agent-service/chat-connection/v1';
const chatKey = (secretKey: Buffer) => Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), KEY_INFO, 32));
const aad = (environmentId: string) => Buffer.from(`environment:${environmentId}`);

/** The secret token of ours that a provider's webhook must carry (Telegram's secret_token), generated per connection. */

export const WEBHOOK_SECRET_FIELD = 'webhookSecret';
export const newWebhookSecret = (): string => randomBytes(24).toString('base64url');

export function sealChatConnection(secretKey: Buffer, environmentId: string, provider: ChatProvider, fields: Record<string, string>, now = new Date()): StoredChatConnection {
  const secretNames: readonly string[] = [...CHAT_SCHEMAS[provider].secrets, WEBHOOK_SECRET_FIELD];
  const secrets: Record<string, string> = {};
  const settings: Record<string, string> = {};
  const hints: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (secretNames.includes(k)) {
      secrets[k] = v;
      hints[k] = v.length >= 16 ? `****${v.slice(-4)}` : '****';
    } else settings[k] = v;
  }
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', chatKey(secretKey), iv);
  cipher.setAAD(aad(environmentId));
  const ct = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
  const sealed = ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  return { provider, settings, sealed, hints, updatedAt: now };
}

/** The secret fields back, for the code that sends messages; throws if the record was tampered with or moved. */
export function openChatConnection(secretKey: Buffer, environmentId: string, stored: StoredChatConnection): Record<string, string> {
  const [version, iv, tag, ct] = stored.sealed.split('.');
  if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('Unknown chat connection format');
  const decipher = createDecipheriv('aes-256-gcm', chatKey(secretKey), Buffer.from(iv, 'base64url'));
  decipher.setAAD(aad(environmentId));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const plain = Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  return { ...stored.settings, ...(JSON.parse(plain) as Record<string, string>) };
}

/** What the API shows: the settings, and each secret only as a hint. */
export function chatView(stored: StoredChatConnection | null | undefined): Record<string, unknown> | null {
  if (!stored) return null;
  const { [WEBHOOK_SECRET_FIELD]: _ours, ...hints } = stored.hints;
  return { provider: stored.provider, ...stored.settings, ...hints, updatedAt: stored.updatedAt.toISOString() };
}
