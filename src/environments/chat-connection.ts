/**
 * The chat user an environment reaches out to (reachOutMode): one provider's settings,
 * validated per provider. Tokens and webhook addresses are sealed with AES-256-GCM under a
 * key derived from the service's secret key, bound to the environment, and never sent back.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { InvalidParameterError, MissingFieldError, ServiceError } from '../errors';
import { parseRequest } from '../api/schemas/validation';

export const CHAT_PROVIDERS = ['telegram', 'slack', 'discord', 'whatsapp', 'teams'] as const;
export type ChatProvider = (typeof CHAT_PROVIDERS)[number];

const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https URL' });

/** One schema per provider; `secrets` names the fields that are stored sealed. */
export const CHAT_SCHEMAS = {
  telegram: {
    schema: z.object({
      botToken: z.string().trim().regex(/^\d+:[A-Za-z0-9_-]{20,}$/, 'must be a Telegram bot token (<bot id>:<secret>)').describe('Token from @BotFather'),
      chatId: z.union([z.number().int(), z.string().trim().regex(/^(-?\d+|@[A-Za-z0-9_]{4,})$/, 'must be a numeric chat id or an @channel name')]).transform(String).describe('Chat to write to'),
    }),
    secrets: ['botToken'],
  },
  slack: {
    schema: z.object({
      botToken: z.string().trim().regex(/^xox[bp]-[A-Za-z0-9-]+$/, 'must be a Slack bot token (xoxb-…)').describe('Bot User OAuth token'),
      channelId: z.string().trim().regex(/^[CDGU][A-Z0-9]{6,}$/, 'must be a Slack channel, conversation or user id').describe('Channel, DM or user id to post to'),
      signingSecret: z.string().trim().regex(/^[a-f0-9]{32}$/, 'must be the Slack app\'s signing secret (32 hex characters)').optional().describe('Signing secret of the Slack app, to take replies (Events API)'),
    }),
    secrets: ['botToken', 'signingSecret'],
  },
  discord: {
    schema: z.object({
      botToken: z.string().trim().min(20, 'must be a Discord bot token').max(200).describe('Bot token'),
      userId: z.string().trim().regex(/^\d{15,21}$/, 'must be a Discord user id (snowflake)').describe('User to message directly'),
    }),
    secrets: ['botToken'],
  },
  whatsapp: {
    schema: z.object({
      accessToken: z.string().trim().min(20, 'must be a WhatsApp Cloud API access token').max(1000).describe('Cloud API access token'),
      phoneNumberId: z.string().trim().regex(/^\d{5,20}$/, 'must be the numeric id of the sending phone number').describe('Sender phone number id'),
      to: z.string().trim().regex(/^\+?[1-9]\d{6,14}$/, 'must be a phone number in international format').describe('Recipient phone number'),
      appSecret: z.string().trim().regex(/^[a-f0-9]{32}$/, 'must be the Meta app secret (32 hex characters)').optional().describe('App secret, to take replies (webhooks signed with X-Hub-Signature-256)'),
    }),
    secrets: ['accessToken', 'appSecret'],
  },
  teams: {
    schema: z.object({
      webhookUrl: httpsUrl.describe('Incoming webhook (or Workflows) URL of the Teams channel or chat'),
    }),
    secrets: ['webhookUrl'],
  },
} satisfies Record<ChatProvider, { schema: z.ZodObject; secrets: string[] }>;

/** As stored on the environment record. */
export interface StoredChatConnection {
  provider: ChatProvider;
  /** The fields that are not secret, as given. */
  settings: Record<string, string>;
  /** `v1.<iv>.<tag>.<ciphertext>` (base64url) of the secret fields as JSON. */
  sealed: string;
  /** The last characters of each secret, so a user can tell which one is set. */
  hints: Record<string, string>;
  updatedAt: Date;
}

/** Validates `PUT /environments/:id/chat`: the provider first, then its own fields. */
export function parseChatConnection(body: unknown): { provider: ChatProvider; fields: Record<string, string> } {
  const raw = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (raw.provider === undefined || raw.provider === null || raw.provider === '') throw new MissingFieldError('provider');
  if (!CHAT_PROVIDERS.includes(raw.provider as ChatProvider)) throw new InvalidParameterError('provider', raw.provider, `provider must be one of: ${CHAT_PROVIDERS.join(', ')}`);
  const provider = raw.provider as ChatProvider;
  const { schema, secrets } = CHAT_SCHEMAS[provider];
  try {
    return { provider, fields: parseRequest(schema, raw) as Record<string, string> };
  } catch (err) {
    // A rejected token is not echoed back in the error's details.
    const parameter = err instanceof ServiceError ? err.details?.parameter : undefined;
    if (err instanceof InvalidParameterError && (secrets as readonly string[]).includes(String(parameter))) throw new InvalidParameterError(String(parameter), '[redacted]', err.message);
    throw err;
  }
}

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
