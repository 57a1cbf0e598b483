import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fitText, sendChatMessage } from './chat-sender';

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  json: any;
}

/** One local server standing in for every provider's API; answers are planned per path. */
let server: http.Server;
let root: string;
const seen: Seen[] = [];
const answers = new Map<string, { status: number; body: unknown; headers?: Record<string, string> }>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, json: body ? JSON.parse(body) : null });
      const a = answers.get(req.url ?? '') ?? { status: 200, body: { ok: true } };
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  seen.length = 0;
  answers.clear();
});

const baseUrls = () => ({ telegram: `${root}/tg`, slack: `${root}/slack`, discord: `${root}/discord`, whatsapp: `${root}/wa` });
const TG_TOKEN = '123456:AAbbCCddEEffGGhhIIjjKKll';

describe('sendChatMessage', () => {
  it('posts to the Telegram Bot API with the chat id', async () => {
    const res = await sendChatMessage('telegram', { botToken: TG_TOKEN, chatId: '-1001' }, 'hello', { baseUrls: baseUrls() });
    expect(res).toEqual({ outcome: 'delivered', statusCode: 200, error: null, retryAfterMs: undefined, json: { ok: true } });
    expect(seen[0]).toMatchObject({ path: `/tg/bot${TG_TOKEN}/sendMessage`, json: { chat_id: '-1001', text: 'hello' } });
  });

  it('keeps the token and the answer\'s text out of an error, and honours Telegram\'s retry_after', async () => {
    answers.set(`/tg/bot${TG_TOKEN}/sendMessage`, { status: 429, body: { ok: false, description: `Too Many Requests for ${TG_TOKEN}`, parameters: { retry_after: 7 } } });
    const res = await sendChatMessage('telegram', { botToken: TG_TOKEN, chatId: '-1001' }, 'x', { baseUrls: baseUrls() });
    expect(res).toMatchObject({ outcome: 'retry', statusCode: 429, retryAfterMs: 7000 });
    expect(res.error).toBe('HTTP 429');
    expect(res.error).not.toContain(TG_TOKEN);
  });

  it('treats Slack\'s ok:false as a refusal, and its rate limit as worth retrying', async () => {
    answers.set('/slack/chat.postMessage', { status: 200, body: { ok: false, error: 'channel_not_found' } });
    const refused = await sendChatMessage('slack', { botToken: 'xoxb-1-2-abc', channelId: 'C0123456' }, 'hi', { baseUrls: baseUrls() });
    expect(refused).toMatchObject({ outcome: 'final', statusCode: 200, error: expect.stringContaining('channel_not_found') });
    expect(seen[0]).toMatchObject({ headers: { authorization: 'Bearer xoxb-1-2-abc' }, json: { channel: 'C0123456', text: 'hi' } });
    answers.set('/slack/chat.postMessage', { status: 200, body: { ok: false, error: 'ratelimited' } });
    expect((await sendChatMessage('slack', { botToken: 'xoxb-1-2-abc', channelId: 'C0123456' }, 'hi', { baseUrls: baseUrls() })).outcome).toBe('retry');
  });

  it('opens a Discord direct message channel, then writes to it', async () => {
    answers.set('/discord/users/@me/channels', { status: 200, body: { id: '998877' } });
    const res = await sendChatMessage('discord', { botToken: 'discord-token-0123456789abcdef', userId: '123456789012345678' }, 'hey', { baseUrls: baseUrls() });
    expect(res.outcome).toBe('delivered');
    expect(seen.map((s) => s.path)).toEqual(['/discord/users/@me/channels', '/discord/channels/998877/messages']);
    expect(seen[0]).toMatchObject({ headers: { authorization: 'Bot discord-token-0123456789abcdef' }, json: { recipient_id: '123456789012345678' } });
    expect(seen[1].json).toEqual({ content: 'hey' });
  });

  it('sends a WhatsApp Cloud API text message, and a 401 is final', async () => {
    await sendChatMessage('whatsapp', { accessToken: 'EAAG-access-token-0123456789', phoneNumberId: '10987654321', to: '+15551234567' }, 'done', { baseUrls: baseUrls() });
    expect(seen[0]).toMatchObject({ path: '/wa/10987654321/messages', json: { messaging_product: 'whatsapp', to: '15551234567', type: 'text', text: { body: 'done' } } });
    answers.set('/wa/10987654321/messages', { status: 401, body: { error: { message: 'Invalid OAuth access token' } } });
    expect((await sendChatMessage('whatsapp', { accessToken: 'EAAG-access-token-0123456789', phoneNumberId: '10987654321', to: '+15551234567' }, 'done', { baseUrls: baseUrls() })).outcome).toBe('final');
  });

  it('posts an adaptive card to a Teams webhook', async () => {
    await sendChatMessage('teams', { webhookUrl: `${root}/teams/hook` }, 'card text');
    expect(seen[0].path).toBe('/teams/hook');
    expect(seen[0].json.attachments[0].content.body[0]).toEqual({ type: 'TextBlock', text: 'card text', wrap: true });
  });

  it('reports an unreachable provider as worth retrying', async () => {
    const res = await sendChatMessage('telegram', { botToken: TG_TOKEN, chatId: '1' }, 'x', { baseUrls: { telegram: 'http://127.0.0.1:1' } });
    expect(res).toMatchObject({ outcome: 'retry', statusCode: null, error: expect.stringMatching(/^Request failed: /) });
  });

  it('cuts a text to the provider\'s limit', () => {
    expect(fitText('discord', 'a'.repeat(1999))).toHaveLength(1999);
    const cut = fitText('discord', 'a'.repeat(5000));
    expect([...cut]).toHaveLength(2000);
    expect(cut.endsWith('… (cut)')).toBe(true);
  });
});
