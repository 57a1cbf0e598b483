/**
 * Sends one text message to an environment's chat connection, through the provider's own
 * HTTP API: Telegram Bot API, Slack Web API, Discord (a direct message to the user),
 * WhatsApp Cloud API, or a Teams incoming webhook. The outcome is classified as webhook
 * deliveries are: delivered, worth retrying (network, 5xx, 408, 429, rate limits), or
 * final (the provider refuses it). Tokens never appear in the error text.
 */
import { classifyStatus, retryAfterMs } from '../webhooks/sender';
import { isGuardRefusal } from '../net/network-guard';
import type { ChatProvider } from '../contracts/schemas/chat-connection.schema';

export interface ChatSendResult {
  outcome: 'delivered' | 'final' | 'retry';
  statusCode: number | null;
  error: string | null;
  retryAfterMs?: number;
}

/** The providers' API roots; CHAT_API_BASE_URLS replaces them (a proxy, a test double). */
export const CHAT_API_DEFAULTS: Record<Exclude<ChatProvider, 'teams'>, string> = {
  telegram: 'https://api.telegram.org',
  slack: 'https://slack.com/api',
  discord: 'https://discord.com/api/v10',
  whatsapp: 'https://graph.facebook.com/v21.0',
};

/** The longest text each provider takes in one message. */
export const CHAT_TEXT_LIMITS: Record<ChatProvider, number> = { telegram: 4096, slack: 39_000, discord: 2000, whatsapp: 4096, teams: 20_000 };

export interface ChatSendOptions {
  baseUrls?: Partial<Record<ChatProvider, string>>;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Cuts a text to the provider's limit, saying so at the end. */
export function fitText(provider: ChatProvider, text: string): string {
  const limit = CHAT_TEXT_LIMITS[provider];
  const chars = [...text];
  if (chars.length <= limit) return text;
  const note = '… (cut)';
  return chars.slice(0, limit - note.length).join('') + note;
}

export async function sendChatMessage(provider: ChatProvider, fields: Record<string, string>, text: string, opts: ChatSendOptions = {}): Promise<ChatSendResult> {
  const base = (p: Exclude<ChatProvider, 'teams'>) => (opts.baseUrls?.[p] ?? CHAT_API_DEFAULTS[p]).replace(/\/+$/, '');
  const secrets = Object.values(fields).filter((v) => v.length >= 8);
  const call = (url: string, init: { headers?: Record<string, string>; body: unknown }) => post(url, init, opts, secrets);
  const body = fitText(provider, text);
  switch (provider) {
    case 'telegram':
      return call(`${base('telegram')}/bot${fields.botToken}/sendMessage`, { body: { chat_id: fields.chatId, text: body, disable_web_page_preview: true } });
    case 'slack':
      return call(`${base('slack')}/chat.postMessage`, { headers: { authorization: `Bearer ${fields.botToken}` }, body: { channel: fields.channelId, text: body } });
    case 'discord': {
      const auth = { authorization: `Bot ${fields.botToken}` };
      const dm = await call(`${base('discord')}/users/@me/channels`, { headers: auth, body: { recipient_id: fields.userId } });
      if (dm.outcome !== 'delivered' || !dm.json || typeof (dm.json as { id?: unknown }).id !== 'string') {
        return dm.outcome === 'delivered' ? { outcome: 'retry', statusCode: dm.statusCode, error: 'Discord did not answer with a direct message channel' } : dm;
      }
      return call(`${base('discord')}/channels/${(dm.json as { id: string }).id}/messages`, { headers: auth, body: { content: body } });
    }
    case 'whatsapp':
      return call(`${base('whatsapp')}/${fields.phoneNumberId}/messages`, {
        headers: { authorization: `Bearer ${fields.accessToken}` },
        body: { messaging_product: 'whatsapp', to: fields.to.replace(/^\+/, ''), type: 'text', text: { body, preview_url: false } },
      });
    case 'teams':
      return call(fields.webhookUrl, {
        body: { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: { type: 'AdaptiveCard', version: '1.4', body: [{ type: 'TextBlock', text: body, wrap: true }] } }] },
      });
  }
}

async function post(url: string, init: { headers?: Record<string, string>; body: unknown }, opts: ChatSendOptions, secrets: string[]): Promise<ChatSendResult & { json?: unknown }> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const scrub = (s: string) => secrets.reduce((acc, v) => acc.split(v).join('[redacted]'), s);
  try {
    const res = await (opts.fetch ?? fetch)(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...init.headers },
      body: JSON.stringify(init.body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text().catch(() => '');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    let outcome = classifyStatus(res.status);
    const answer = (json ?? {}) as { ok?: boolean; error?: string; description?: string; parameters?: { retry_after?: number } };
    // Slack answers 200 with ok:false; Telegram says ok:false with its error status.
    if (outcome === 'delivered' && answer.ok === false) outcome = answer.error === 'ratelimited' ? 'retry' : 'final';
    // The provider's error code (Slack's `error`, e.g. channel_not_found) is kept when it is a
    // plain identifier; its free text never is (an address of the user's could echo anything).
    const code = typeof answer.error === 'string' && /^[a-z0-9_]{1,64}$/.test(answer.error) ? answer.error : '';
    const wait = answer.parameters?.retry_after !== undefined ? answer.parameters.retry_after * 1000 : retryAfterMs(res.headers.get('retry-after'));
    return {
      outcome,
      statusCode: res.status,
      error: outcome === 'delivered' ? null : `HTTP ${res.status}${code ? `: ${code}` : ''}`,
      retryAfterMs: outcome === 'retry' ? wait : undefined,
      json,
    };
  } catch (err) {
    if (isGuardRefusal(err)) return { outcome: 'final', statusCode: null, error: scrub(`Not sent: ${err.message}`) };
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const reason = e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
    return { outcome: 'retry', statusCode: null, error: scrub(`Request failed: ${reason}`) };
  }
}
