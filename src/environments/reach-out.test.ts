import { createHmac, randomBytes } from 'node:crypto';
import { chatView, openChatConnection, sealChatConnection, WEBHOOK_SECRET_FIELD } from './chat-connection';
import { guardrailText, parseChatUpdate, resultText, verifyChatWebhook } from './reach-out';

const body = Buffer.from(JSON.stringify({ type: 'event_callback', event: { type: 'message', channel: 'C0ABCDEF1', text: 'yes' } }));
const slackSecret = 'a'.repeat(32);
const slackHeaders = (ts: number, secret = slackSecret, raw = body) => ({
  'x-slack-request-timestamp': String(ts),
  'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:`).update(raw).digest('hex')}`,
});

describe('reach-out webhooks', () => {
  it('takes Telegram updates only with our secret token', () => {
    const fields = { [WEBHOOK_SECRET_FIELD]: 'tok_abcdefghijklmnopqrstuv' };
    expect(verifyChatWebhook('telegram', fields, { 'x-telegram-bot-api-secret-token': 'tok_abcdefghijklmnopqrstuv' }, body)).toBe(true);
    expect(verifyChatWebhook('telegram', fields, { 'x-telegram-bot-api-secret-token': 'tok_abcdefghijklmnopqrstuw' }, body)).toBe(false);
    expect(verifyChatWebhook('telegram', fields, {}, body)).toBe(false);
    expect(verifyChatWebhook('telegram', {}, { 'x-telegram-bot-api-secret-token': '' }, body)).toBe(false);
  });

  it('checks the Slack v0 signature and refuses stale or tampered requests', () => {
    const now = 1_700_000_000;
    const fields = { signingSecret: slackSecret };
    expect(verifyChatWebhook('slack', fields, slackHeaders(now), body, now)).toBe(true);
    expect(verifyChatWebhook('slack', fields, slackHeaders(now - 301), body, now)).toBe(false);
    expect(verifyChatWebhook('slack', fields, slackHeaders(now, 'b'.repeat(32)), body, now)).toBe(false);
    expect(verifyChatWebhook('slack', fields, slackHeaders(now), Buffer.from(`${body.toString()} `), now)).toBe(false);
    // no signing secret configured: no reply is taken
    expect(verifyChatWebhook('slack', {}, slackHeaders(now), body, now)).toBe(false);
  });

  it('checks the WhatsApp (Meta) body signature; providers without inbound support refuse', () => {
    const appSecret = 'c'.repeat(32);
    const sig = `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;
    expect(verifyChatWebhook('whatsapp', { appSecret }, { 'x-hub-signature-256': sig }, body)).toBe(true);
    expect(verifyChatWebhook('whatsapp', { appSecret }, { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }, body)).toBe(false);
    expect(verifyChatWebhook('discord', { botToken: 'x'.repeat(30) }, {}, body)).toBe(false);
    expect(verifyChatWebhook('teams', { webhookUrl: 'https://x' }, {}, body)).toBe(false);
  });

  it('reads the reply from the connected chat only, never from a bot', () => {
    expect(parseChatUpdate('telegram', { chatId: '42' }, { message: { text: 'hi', chat: { id: 42 }, from: { is_bot: false } } })).toEqual({ kind: 'reply', text: 'hi' });
    expect(parseChatUpdate('telegram', { chatId: '@mychan' }, { message: { text: 'hi', chat: { id: -1, username: 'mychan' } } })).toEqual({ kind: 'reply', text: 'hi' });
    expect(parseChatUpdate('telegram', { chatId: '42' }, { message: { text: 'hi', chat: { id: 43 } } })).toEqual({ kind: 'ignore' });
    expect(parseChatUpdate('telegram', { chatId: '42' }, { message: { text: 'hi', chat: { id: 42 }, from: { is_bot: true } } })).toEqual({ kind: 'ignore' });
    expect(parseChatUpdate('telegram', { chatId: '42' }, { message: { photo: [], chat: { id: 42 } } })).toEqual({ kind: 'ignore' });
    expect(parseChatUpdate('slack', { channelId: 'C0ABCDEF1' }, { type: 'url_verification', challenge: 'c1' })).toEqual({ kind: 'challenge', challenge: 'c1' });
    expect(parseChatUpdate('slack', { channelId: 'C0ABCDEF1' }, JSON.parse(body.toString()))).toEqual({ kind: 'reply', text: 'yes' });
    expect(parseChatUpdate('slack', { channelId: 'C0ABCDEF1' }, { type: 'event_callback', event: { type: 'message', channel: 'C0ABCDEF1', text: 'x', bot_id: 'B1' } })).toEqual({ kind: 'ignore' });
    expect(parseChatUpdate('slack', { channelId: 'C0ABCDEF1' }, { type: 'event_callback', event: { type: 'message', channel: 'C0OTHER11', text: 'x' } })).toEqual({ kind: 'ignore' });
    const wa = (from: string) => ({ entry: [{ changes: [{ value: { messages: [{ from, type: 'text', text: { body: 'ok' } }] } }] }] });
    expect(parseChatUpdate('whatsapp', { to: '+4915112345678' }, wa('4915112345678'))).toEqual({ kind: 'reply', text: 'ok' });
    expect(parseChatUpdate('whatsapp', { to: '+4915112345678' }, wa('4915100000000'))).toEqual({ kind: 'ignore' });
  });

  it('words the messages', () => {
    expect(guardrailText({ question: 'Code?', webViewURL: 'https://x/view/s?token=t' })).toBe('The agent needs your input:\nCode?\n\nReply to this message to answer, or take over in the live view: https://x/view/s?token=t');
    expect(resultText({ status: 'task_completed', message: 'Done' })).toBe('Task finished:\nDone');
    expect(resultText({ status: 'failed', code: 'TASK_TIMEOUT', error: 'Too slow' })).toBe('Task failed (TASK_TIMEOUT): Too slow');
  });

  it('keeps our webhook secret sealed and out of the connection as shown', () => {
    const key = randomBytes(32);
    const stored = sealChatConnection(key, 'env_1', 'telegram', { botToken: `1:${'A'.repeat(30)}`, chatId: '42', [WEBHOOK_SECRET_FIELD]: 'our-secret-token-123456' });
    expect(JSON.stringify(stored)).not.toContain('our-secret-token-123456');
    expect(JSON.stringify(chatView(stored))).not.toContain(WEBHOOK_SECRET_FIELD);
    expect(openChatConnection(key, 'env_1', stored)[WEBHOOK_SECRET_FIELD]).toBe('our-secret-token-123456');
  });
});
