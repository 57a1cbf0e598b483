/** `PUT /environments/:id/chat`: one schema per chat provider, and the connection as stored (secret fields sealed). */
import { z } from 'zod';
import { InvalidParameterError, MissingFieldError, ServiceError } from '../errors';
import { parseRequest } from './validation';

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

/** The request body as the OpenAPI document shows it: `provider` and that provider's fields. */
export const chatConnectionRequestSchema = z
  .discriminatedUnion(
    'provider',
    CHAT_PROVIDERS.map((provider) => CHAT_SCHEMAS[provider].schema.extend({ provider: z.literal(provider) })) as unknown as [z.ZodObject, ...z.ZodObject[]],
  )
  .describe('Chat connection: the provider and its fields (surrounding spaces of a text field are ignored)');

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
