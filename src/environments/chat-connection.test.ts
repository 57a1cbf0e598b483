import { randomBytes } from 'node:crypto';
import { chatView, openChatConnection, sealChatConnection } from './chat-connection';
import { parseChatConnection } from '../contracts/schemas/chat-connection.schema';

const key = randomBytes(32);
const token = `123456789:${'A'.repeat(35)}`;

describe('chat connection', () => {
  it('validates the provider first, then its own fields', () => {
    expect(parseChatConnection({ provider: 'telegram', botToken: token, chatId: -100123 })).toEqual({ provider: 'telegram', fields: { botToken: token, chatId: '-100123' } });
    expect(() => parseChatConnection({})).toThrow(expect.objectContaining({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'provider' } }));
    expect(() => parseChatConnection({ provider: 'pager' })).toThrow('provider must be one of: telegram, slack, discord, whatsapp, teams');
    expect(() => parseChatConnection({ provider: 'slack', botToken: 'xoxb-1-abc' })).toThrow(expect.objectContaining({ details: { field: 'channelId' } }));
    expect(() => parseChatConnection({ provider: 'whatsapp', accessToken: 'x'.repeat(30), phoneNumberId: '123456', to: 'call me' })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER', details: expect.objectContaining({ parameter: 'to' }) }));
  });

  it('never echoes a rejected secret in the error', () => {
    const err = (() => {
      try {
        parseChatConnection({ provider: 'telegram', botToken: 'secret-but-malformed', chatId: 1 });
      } catch (e) {
        return e as { details: Record<string, unknown>; message: string };
      }
    })()!;
    expect(err.details).toMatchObject({ parameter: 'botToken', value: '[redacted]' });
    expect(JSON.stringify(err)).not.toContain('secret-but-malformed');
  });

  it('seals the secret fields, shows only a hint, and opens only for its environment and key', () => {
    const stored = sealChatConnection(key, 'env_1', 'telegram', { botToken: token, chatId: '42' });
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(stored.settings).toEqual({ chatId: '42' });
    expect(chatView(stored)).toEqual({ provider: 'telegram', chatId: '42', botToken: '****AAAA', updatedAt: expect.any(String) });
    expect(openChatConnection(key, 'env_1', stored)).toEqual({ chatId: '42', botToken: token });
    expect(() => openChatConnection(key, 'env_2', stored)).toThrow();
    expect(() => openChatConnection(randomBytes(32), 'env_1', stored)).toThrow();
    const [v, iv, tag, ct] = stored.sealed.split('.');
    const flipped = Buffer.from(ct, 'base64url');
    flipped[0] ^= 1;
    expect(() => openChatConnection(key, 'env_1', { ...stored, sealed: [v, iv, tag, flipped.toString('base64url')].join('.') })).toThrow();
    // a fresh IV each time
    expect(sealChatConnection(key, 'env_1', 'telegram', { botToken: token, chatId: '42' }).sealed).not.toBe(stored.sealed);
  });

  it('treats a Teams webhook address as a secret', () => {
    const url = 'https://example.webhook.office.com/webhookb2/abcdef/IncomingWebhook/123/456';
    const { provider, fields } = parseChatConnection({ provider: 'teams', webhookUrl: url });
    const stored = sealChatConnection(key, 'env_1', provider, fields);
    expect(chatView(stored)).toEqual({ provider: 'teams', webhookUrl: '****/456', updatedAt: expect.any(String) });
    expect(() => parseChatConnection({ provider: 'teams', webhookUrl: 'http://example.com/x' })).toThrow(expect.objectContaining({ details: expect.objectContaining({ parameter: 'webhookUrl', value: '[redacted]' }) }));
  });
});
