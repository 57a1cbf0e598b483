/**
 * Reach-out end to end: a session on an environment with a chat connection asks a human
 * (the scripted model calls request_human_input) → with nobody watching, the question and
 * the live view link go to stand-in Telegram and Slack APIs → the chat user's reply comes
 * back as the provider's webhook (POST /chat/:provider/:environmentId) and the task goes on.
 */
import http from 'node:http';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WorkflowNotFoundError } from '@temporalio/client';
import { api, waitFor } from '../support/http';
import { allowedPort } from '../support/ports';
import { recordedRequests, registerScript } from '../support/scripted-model';
import { createUser, startService, temporalClient, type ServiceProcess } from '../support/service';
import { connectSession } from '../support/socket';

const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

interface ChatCall {
  provider: 'telegram' | 'slack';
  path: string;
  json: any;
  at: number;
}

let fake: http.Server;
const calls: ChatCall[] = [];
let svc: ServiceProcess;
let workflows: ServiceProcess;
const latencies: number[] = [];

beforeAll(async () => {
  // Stand-ins for the Telegram Bot API (/tg) and the Slack Web API (/slack): record and say ok.
  fake = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const provider = req.url?.startsWith('/tg/') ? 'telegram' : 'slack';
      calls.push({ provider, path: req.url ?? '', json: JSON.parse(body || '{}'), at: Date.now() });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(provider === 'telegram' ? { ok: true, result: { message_id: calls.length } } : { ok: true, ts: '1.2' }));
    });
  });
  await new Promise<void>((r) => fake.listen(allowedPort(), '127.0.0.1', r));
  const root = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  // An API and a workflow worker of their own that reach the stand-ins; the sessions' browsers
  // are on the suite's browser worker.
  const own = { TEMPORAL_TASK_QUEUE: `reach-${Date.now()}`, CHAT_API_BASE_URLS: JSON.stringify({ telegram: `${root}/tg`, slack: `${root}/slack` }) };
  [svc, workflows] = await Promise.all([startService({ ...own, ROLE: 'api' }), startService({ ...own, ROLE: 'workflows' })]);
}, 180_000);

afterAll(async () => {
  await Promise.all([svc?.stop(), workflows?.stop()]);
  fake.closeAllConnections();
  await new Promise<void>((r) => fake.close(() => r()));
  const sorted = [...latencies].sort((a, b) => a - b);
  if (sorted.length) console.log(`reach-out latency (model asked → chat message), ms: ${JSON.stringify(latencies)}, p50 ${sorted[Math.floor((sorted.length - 1) / 2)]}`);
});

const call = (method: string, path: string, opts: Parameters<typeof api>[3] = {}) => api(svc.baseUrl, method, path, opts);
/** The live view link without its origin (each process of the test has its own PUBLIC_BASE_URL). */
const liveViewPath = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};
const chatCallsWith = (text: string) => calls.filter((c) => JSON.stringify(c.json).includes(text));

async function environmentWithChat(key: string, chat: Record<string, unknown>): Promise<{ environmentId: string; replies: any }> {
  const env = await call('POST', '/environments', { key, body: { name: `reach ${Date.now()}` } });
  expect(env.status).toBe(200);
  const put = await call('PUT', `/environments/${env.body.environment._id}/chat`, { key, body: chat });
  expect(put.status).toBe(200);
  return { environmentId: env.body.environment._id, replies: put.body.replies };
}

/** The model asks for a colour, then finishes with the answer it was given. */
async function askingScript(t: string, question: string): Promise<void> {
  await registerScript(model(), {
    match: t,
    steps: [
      { tool: 'request_human_input', args: { type: 'human_input_needed', value: question } },
      { tool: 'done', args: { message: 'Colour: {{find:The human answered your request: (\\w+)}}' } },
    ],
  });
}

const telegramUpdate = (chatId: number, text: string) => ({
  update_id: Math.floor(Math.random() * 1e9),
  message: { message_id: 7, from: { id: 4242, is_bot: false, first_name: 'Ada' }, chat: { id: chatId, type: 'private' }, date: Math.floor(Date.now() / 1000), text },
});

const terminate = (key: string, sessionId: string) => call('POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'state', newState: 'terminate' } } });

async function pollUntilDone(sessionId: string, taskId: string): Promise<any> {
  return waitFor(async () => {
    const r = await call('GET', `/task/${sessionId}/${taskId}`);
    return r.body.status === 'task_completed' || r.body.status === 'failed' ? r.body : null;
  }, 60_000, 500);
}

describe('reach-out to the chat when nobody watches', () => {
  it('sends a guardrail once to Telegram with the live view link; the chat reply resumes the task', async () => {
    const { apiKey: key } = await createUser();
    const chatId = 100000000 + Math.floor(Math.random() * 1e8);
    const botToken = '123456789:AAH-reach-token-abcdefghijklmnop';
    const { environmentId, replies } = await environmentWithChat(key, { provider: 'telegram', botToken, chatId: String(chatId) });
    expect(replies).toMatchObject({ url: expect.stringContaining(`/chat/telegram/${environmentId}`), secretToken: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/) });
    const secret: string = replies.secretToken;
    // the secret token is not shown again
    const listed = await call('GET', `/environments/${environmentId}`, { key });
    expect(JSON.stringify(listed.body)).not.toContain(secret);

    for (let run = 0; run < 3; run++) {
      const t = token(`tg${run}`);
      const question = `Which colour should I pick? ${t}`;
      await askingScript(t, question);
      // the previous run's session gives the environment back as it ends
      const started = await waitFor(async () => {
        const r = await call('POST', '/start/start-session', { key, body: { environmentId, task: { prompt: `${t} pick a colour`, startingUrl: `${fixtures()}/about.html` } } });
        // Every try counts against the 10-a-minute limit, refused ones included: tries are spaced
        // 7 s apart (under 10 a minute), and a 429 waits out its Retry-After before the next.
        if (r.status === 429) await new Promise((res) => setTimeout(res, Number(r.headers.get('retry-after') ?? 10) * 1000));
        if ((r.status === 409 && r.body.code === 'PROFILE_IN_USE') || r.status === 429) return null;
        return r;
      }, 150_000, 7000);
      expect(started.status).toBe(200);
      const { sessionId, taskId } = started.body;

      const sent = await waitFor(async () => chatCallsWith(t)[0], 60_000);
      expect(sent.path).toBe(`/tg/bot${botToken}/sendMessage`);
      expect(sent.json.chat_id).toBe(String(chatId));
      expect(sent.json.text).toContain(question);
      expect(sent.json.text).toContain(liveViewPath(started.body.streaming.webViewURL));
      const asked = (await recordedRequests(model(), t)).find((r) => r.step === 0)!;
      latencies.push(sent.at - asked.at);

      if (run === 0) {
        // unknown environment, wrong provider, bad or missing secret: nothing said, nothing done
        const update = telegramUpdate(chatId, 'red');
        expect(await call('POST', `/chat/telegram/env_nope${Date.now()}`, { body: update, headers: { 'x-telegram-bot-api-secret-token': secret } })).toMatchObject({ status: 404, text: '' });
        expect((await call('POST', `/chat/slack/${environmentId}`, { body: update })).status).toBe(404);
        expect(await call('POST', `/chat/telegram/${environmentId}`, { body: update, headers: { 'x-telegram-bot-api-secret-token': `${secret}x` } })).toMatchObject({ status: 401, text: '' });
        expect((await call('POST', `/chat/telegram/${environmentId}`, { body: update })).status).toBe(401);
        // a message from another chat is acknowledged and ignored
        expect((await call('POST', `/chat/telegram/${environmentId}`, { body: telegramUpdate(chatId + 1, 'red'), headers: { 'x-telegram-bot-api-secret-token': secret } })).status).toBe(200);
      }

      const reply = await call('POST', `/chat/telegram/${environmentId}`, { body: telegramUpdate(chatId, 'blue'), headers: { 'x-telegram-bot-api-secret-token': secret } });
      expect(reply.status).toBe(200);
      const done = await pollUntilDone(sessionId, taskId);
      expect(done).toMatchObject({ status: 'task_completed', data: { message: 'Colour: blue' } });
      // sent once, and not the result (guardrail_only)
      expect(chatCallsWith(t)).toHaveLength(1);
      expect(chatCallsWith('Colour: blue')).toHaveLength(0);
      expect((await terminate(key, sessionId)).status).toBe(200);
    }
  }, 300_000);

  it('reachOutMode full: the guardrail and the result go to Slack; the Events API reply is checked with the signing secret', async () => {
    const { apiKey: key } = await createUser();
    const channelId = `C${Date.now().toString(36).toUpperCase()}`;
    const signingSecret = createHmac('sha256', 'k').update(channelId).digest('hex').slice(0, 32);
    const { environmentId, replies } = await environmentWithChat(key, { provider: 'slack', botToken: 'xoxb-1-reach-test', channelId, signingSecret });
    expect(replies).toMatchObject({ url: expect.stringContaining(`/chat/slack/${environmentId}`) });
    const signed = (body: string, ts = Math.floor(Date.now() / 1000), secret = signingSecret) => ({
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`,
    });

    // Slack checks the request URL with a signed challenge
    const challenge = JSON.stringify({ type: 'url_verification', challenge: 'ch-123', token: 'x' });
    expect((await call('POST', `/chat/slack/${environmentId}`, { rawBody: challenge, headers: signed(challenge) })).body).toEqual({ challenge: 'ch-123' });

    const t = token('slack');
    const question = `Which colour should I pick? ${t}`;
    await askingScript(t, question);
    const started = await call('POST', '/start/start-session', { key, body: { environmentId, reachOutMode: 'full', task: { prompt: `${t} pick a colour`, startingUrl: `${fixtures()}/about.html` } } });
    expect(started.status).toBe(200);
    const sent = await waitFor(async () => chatCallsWith(t)[0], 60_000);
    expect(sent).toMatchObject({ provider: 'slack', path: '/slack/chat.postMessage', json: { channel: channelId } });
    expect(sent.json.text).toContain(question);
    expect(sent.json.text).toContain(liveViewPath(started.body.streaming.webViewURL));

    const event = JSON.stringify({ type: 'event_callback', event: { type: 'message', channel: channelId, user: 'U0REACH01', text: 'green', ts: '1.1' } });
    expect((await call('POST', `/chat/slack/${environmentId}`, { rawBody: event, headers: signed(event, Math.floor(Date.now() / 1000), 'f'.repeat(32)) })).status).toBe(401);
    expect((await call('POST', `/chat/slack/${environmentId}`, { rawBody: event, headers: signed(event, Math.floor(Date.now() / 1000) - 600) })).status).toBe(401);
    // our own message echoed back by Slack is not an answer
    const echo = JSON.stringify({ type: 'event_callback', event: { type: 'message', channel: channelId, bot_id: 'B1', text: 'purple', ts: '1.0' } });
    expect((await call('POST', `/chat/slack/${environmentId}`, { rawBody: echo, headers: signed(echo) })).status).toBe(200);
    expect((await call('POST', `/chat/slack/${environmentId}`, { rawBody: event, headers: signed(event) })).status).toBe(200);

    // the result comes to the chat (nobody polls in between)
    const result = await waitFor(async () => chatCallsWith('Colour: green')[0], 60_000);
    expect(result.json).toEqual({ channel: channelId, text: 'Task finished:\nColour: green' });
    expect(chatCallsWith('purple')).toHaveLength(0);
    const done = await pollUntilDone(started.body.sessionId, started.body.taskId);
    expect(done).toMatchObject({ status: 'task_completed', data: { message: 'Colour: green' } });
    expect(chatCallsWith(t)).toHaveLength(1);
    await terminate(key, started.body.sessionId);
  }, 180_000);

  it('sends nothing while a live channel subscriber watches the session', async () => {
    const { apiKey: key } = await createUser();
    const chatId = 200000000 + Math.floor(Math.random() * 1e8);
    const { environmentId } = await environmentWithChat(key, { provider: 'telegram', botToken: '123456789:AAH-watched-token-abcdefghijkl', chatId: String(chatId) });
    const started = await call('POST', '/start/start-session', { key, body: { environmentId, reachOutMode: 'full' } });
    expect(started.status).toBe(200);
    const { sessionId } = started.body;
    const watcher = await connectSession(svc.baseUrl, { sessionId });
    const { client, close } = await temporalClient();
    try {
      const t = token('watched');
      await askingScript(t, `Which colour should I pick? ${t}`);
      const asked = await call('POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${t} pick a colour`, startingUrl: `${fixtures()}/about.html` } } });
      expect(asked.body).toMatchObject({ success: true, type: 'guardrail_trigger' });
      await watcher.waitFor((r) => r.payload?.type === 'guardrail_trigger');
      // the reach-out decided not to send: someone watches
      // (the delivery starts right after the event: wait for it to exist)
      const decided = await waitFor(() => client.workflow.getHandle(`chat-reach_${asked.body.taskId}_1`).result(), 30_000, 200);
      expect(decided).toMatchObject({ status: 'skipped' });
      // the watcher answers on the live channel
      watcher.socket.emit('message', { actionType: 'guardrail', newState: 'resume', prompt: 'amber' });
      await watcher.waitFor((r) => r.payload?.type === 'task_completed', 60_000);
      const result = await waitFor(() => client.workflow.getHandle(`chat-reach_${asked.body.taskId}_result`).result(), 30_000, 200);
      expect(result).toMatchObject({ status: 'skipped' });
      expect(calls.filter((c) => c.json.chat_id === String(chatId))).toHaveLength(0);
    } finally {
      watcher.socket.close();
      await close();
      await terminate(key, sessionId);
    }
  }, 180_000);

  it('reachOutMode off never reaches out', async () => {
    const { apiKey: key } = await createUser();
    const chatId = 300000000 + Math.floor(Math.random() * 1e8);
    const { environmentId } = await environmentWithChat(key, { provider: 'telegram', botToken: '123456789:AAH-off-token-abcdefghijklmnop', chatId: String(chatId) });
    const t = token('off');
    await askingScript(t, `Which colour should I pick? ${t}`);
    const started = await call('POST', '/start/start-session', { key, body: { environmentId, reachOutMode: 'off', task: { prompt: `${t} pick a colour`, startingUrl: `${fixtures()}/about.html` } } });
    expect(started.status).toBe(200);
    const { sessionId, taskId } = started.body;
    // wait for the question without watching (no poll, no socket): the model was asked for its next step
    await waitFor(async () => (await recordedRequests(model(), t)).length >= 1, 60_000);
    await waitFor(async () => {
      const r = await api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'guardrail', newState: 'resume', prompt: 'teal' } } });
      return r.status === 200;
    }, 30_000, 500);
    const done = await pollUntilDone(sessionId, taskId);
    expect(done).toMatchObject({ status: 'task_completed', data: { message: 'Colour: teal' } });
    const { client, close } = await temporalClient();
    try {
      await expect(client.workflow.getHandle(`chat-reach_${taskId}_1`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
      await expect(client.workflow.getHandle(`chat-reach_${taskId}_result`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    } finally {
      await close();
    }
    expect(calls.filter((c) => c.json.chat_id === String(chatId))).toHaveLength(0);
    await terminate(key, sessionId);
  }, 180_000);
});
