/**
 * Reach-out: who is watching a session (counted in Redis, so every API instance sees the
 * same answer), the chat messages sent when nobody is, and the provider webhooks that
 * bring the chat user's reply back (verified with the provider's signing scheme or a
 * secret token of ours).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ChatProvider } from '../contracts/schemas/chat-connection.schema';

export type ReachOutMode = 'off' | 'guardrail_only' | 'full';

/** A socket or a poll counts as watching for this long. */
export const WATCH_WINDOW_MS = 30_000;
/** How often an API instance refreshes the presence of its sockets (well inside the window). */
export const WATCH_REFRESH_MS = 10_000;

const socketsKey = (sessionId: string) => `watch:sockets:${sessionId}`;
const pollKey = (sessionId: string) => `watch:poll:${sessionId}`;

/**
 * Presence of watchers: each socket is a member of its session's sorted set, scored with
 * the time it was last seen (refreshed while connected), so the sockets of an API instance
 * that died stop counting after the window; a poll sets a key that expires after it.
 */
export class Watchers {
  constructor(private readonly redis: Redis) {}

  async socketSeen(sessionId: string, socketId: string, now = Date.now()): Promise<void> {
    await this.redis.multi().zadd(socketsKey(sessionId), now, socketId).pexpire(socketsKey(sessionId), WATCH_WINDOW_MS * 2).exec();
  }

  async socketLeft(sessionId: string, socketId: string): Promise<void> {
    await this.redis.zrem(socketsKey(sessionId), socketId);
  }

  async polled(sessionId: string, now = Date.now()): Promise<void> {
    await this.redis.set(pollKey(sessionId), String(now), 'PX', WATCH_WINDOW_MS);
  }

  /** A socket seen within the window, or a poll within it. */
  async watched(sessionId: string, now = Date.now()): Promise<boolean> {
    const [sockets, poll] = await Promise.all([this.redis.zcount(socketsKey(sessionId), now - WATCH_WINDOW_MS, '+inf'), this.redis.exists(pollKey(sessionId))]);
    return sockets > 0 || poll > 0;
  }
}

export function guardrailText(args: { question: string; webViewURL: string }): string {
  return `The agent needs your input:\n${args.question}\n\nReply to this message to answer, or take over in the live view: ${args.webViewURL}`;
}

export function resultText(args: { status: string; message?: string; error?: string; code?: string }): string {
  if (args.status === 'task_completed') return `Task finished:\n${args.message ?? ''}`;
  if (args.status === 'stopped') return 'Task stopped';
  return `Task failed (${args.code ?? 'TASK_FAILED'}): ${args.error ?? 'The task failed'}`;
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Slack rejects signatures older than this (replays). */
export const SLACK_MAX_SKEW_S = 5 * 60;

/**
 * Whether an incoming webhook request comes from the provider for this connection:
 * Telegram sends our secret token in `X-Telegram-Bot-Api-Secret-Token`; Slack signs
 * `v0:<timestamp>:<body>` with the app's signing secret (`X-Slack-Signature`); WhatsApp
 * (Meta) signs the body with the app secret (`X-Hub-Signature-256`).
 */
export function verifyChatWebhook(provider: ChatProvider, fields: Record<string, string>, headers: Record<string, string | string[] | undefined>, rawBody: Buffer, nowS = Math.floor(Date.now() / 1000)): boolean {
  const header = (name: string) => {
    const v = headers[name];
    return typeof v === 'string' ? v : '';
  };
  switch (provider) {
    case 'telegram':
      return !!fields.webhookSecret && same(header('x-telegram-bot-api-secret-token'), fields.webhookSecret);
    case 'slack': {
      const ts = header('x-slack-request-timestamp');
      if (!fields.signingSecret || !/^\d{1,12}$/.test(ts) || Math.abs(nowS - Number(ts)) > SLACK_MAX_SKEW_S) return false;
      const want = `v0=${createHmac('sha256', fields.signingSecret).update(`v0:${ts}:`).update(rawBody).digest('hex')}`;
      return same(header('x-slack-signature'), want);
    }
    case 'whatsapp': {
      if (!fields.appSecret) return false;
      const want = `sha256=${createHmac('sha256', fields.appSecret).update(rawBody).digest('hex')}`;
      return same(header('x-hub-signature-256'), want);
    }
    default:
      return false;
  }
}

/** What an incoming update means for us. */
export type InboundChat = { kind: 'reply'; text: string } | { kind: 'challenge'; challenge: string } | { kind: 'ignore' };

/**
 * The user's text from a provider's update, when it comes from the connected chat and not
 * from a bot (our own messages echo back on Slack). Anything else is acknowledged and ignored.
 */
export function parseChatUpdate(provider: ChatProvider, settings: Record<string, string>, body: unknown): InboundChat {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, any>;
  switch (provider) {
    case 'telegram': {
      const m = b.message ?? b.edited_message;
      if (!m || typeof m.text !== 'string' || m.from?.is_bot) return { kind: 'ignore' };
      const chat = m.chat ?? {};
      const matches = String(chat.id) === settings.chatId || (typeof chat.username === 'string' && `@${chat.username}` === settings.chatId);
      return matches ? { kind: 'reply', text: m.text } : { kind: 'ignore' };
    }
    case 'slack': {
      if (b.type === 'url_verification' && typeof b.challenge === 'string') return { kind: 'challenge', challenge: b.challenge };
      const e = b.type === 'event_callback' ? b.event : undefined;
      if (!e || e.type !== 'message' || typeof e.text !== 'string' || e.bot_id || e.subtype) return { kind: 'ignore' };
      const matches = e.channel === settings.channelId || e.user === settings.channelId;
      return matches ? { kind: 'reply', text: e.text } : { kind: 'ignore' };
    }
    case 'whatsapp': {
      const msg = b.entry?.[0]?.changes?.[0]?.value?.messages?.[0];
      if (!msg || msg.type !== 'text' || typeof msg.text?.body !== 'string') return { kind: 'ignore' };
      return String(msg.from) === settings.to.replace(/^\+/, '') ? { kind: 'reply', text: msg.text.body } : { kind: 'ignore' };
    }
    default:
      return { kind: 'ignore' };
  }
}

/** Providers whose replies come back to `POST /chat/:provider/:environmentId`. */
export const INBOUND_PROVIDERS: readonly ChatProvider[] = ['telegram', 'slack', 'whatsapp'];
