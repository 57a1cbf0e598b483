import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskFailure } from '../../contracts/errors';
import { createAnthropicClient } from './anthropic.client';
import { isAbortError } from './errors';
import type { LlmRequest } from './types';

/** A tiny fake of POST /v1/messages: each test sets what it answers. */
interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}
type Answer = { status: number; body: unknown; delayMs?: number };

const API_KEY = 'sk-ant-test-secret-0123456789';
let server: http.Server;
let url: string;
let seen: Seen[] = [];
let answer: Answer;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(raw || '{}') });
      const reply = () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      if (!answer.delayMs) return reply();
      const timer = setTimeout(reply, answer.delayMs);
      res.on('close', () => clearTimeout(timer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen = [];
});

const client = (baseURL = url) => createAnthropicClient({ baseURL, apiKey: API_KEY, model: 'claude-test', maxRetries: 0, timeoutMs: 5000 });
const message = (content: unknown[], usage: unknown = { input_tokens: 1200, output_tokens: 35, cache_read_input_tokens: 100 }) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test-20250101',
  content,
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage,
});
const apiError = (type: string, msg: string) => ({ type: 'error', error: { type, message: msg } });

const REQUEST: LlmRequest = {
  system: 'You drive a browser.',
  tools: [{ name: 'click_element', description: 'Click', parameters: { $schema: 'x', type: 'object', properties: { index: { type: 'integer' } }, required: ['index'] } }],
  maxTokens: 700,
  messages: [
    { role: 'user', content: 'New task: click send' },
    { role: 'assistant', content: 'Clicking.', toolCalls: [{ id: 'toolu_1', name: 'click_element', arguments: '{"index":2}' }, { id: 'toolu_2', name: 'scroll', arguments: 'not json' }] },
    { role: 'tool', toolCallId: 'toolu_1', content: 'Clicked "Send"' },
    { role: 'tool', toolCallId: 'toolu_2', content: 'Not performed: only one action is taken per step.' },
    { role: 'user', content: 'The human answered your request: yes' },
    { role: 'user', content: 'Observation (step 2):\n[0] button "OK"', image: 'iVBORw0KGgo=' },
    { role: 'assistant', content: '' },
    { role: 'user', content: 'You must answer with exactly one tool call.' },
  ],
};

describe('Anthropic client', () => {
  it('maps messages, tools and images to the messages API and tool_use blocks back to tool calls', async () => {
    answer = { status: 200, body: message([{ type: 'text', text: 'I will click OK.' }, { type: 'tool_use', id: 'toolu_9', name: 'click_element', input: { index: 0 } }]) };
    // a base URL copied with /v1 must not end up as /v1/v1/messages
    const res = await client(`${url}/v1`).complete(REQUEST);
    expect(res).toEqual({
      text: 'I will click OK.',
      toolCalls: [{ id: 'toolu_9', name: 'click_element', arguments: '{"index":0}' }],
      usage: { inputTokens: 1300, outputTokens: 35 },
      model: 'claude-test-20250101',
    });

    expect(seen).toHaveLength(1);
    const [{ path, headers, body }] = seen;
    expect(path).toBe('/v1/messages');
    // this SDK version sends the key as a bearer token; older ones used x-api-key
    expect(headers['x-api-key'] ?? headers.authorization).toMatch(new RegExp(`^(Bearer )?${API_KEY}$`));
    expect(headers['anthropic-version']).toBeTruthy();
    expect(body).toMatchObject({ model: 'claude-test', max_tokens: 700, system: 'You drive a browser.', tool_choice: { type: 'auto' } });
    expect(body.tools).toEqual([{ name: 'click_element', description: 'Click', input_schema: { type: 'object', properties: { index: { type: 'integer' } }, required: ['index'] } }]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'New task: click send' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Clicking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'click_element', input: { index: 2 } },
          { type: 'tool_use', id: 'toolu_2', name: 'scroll', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Clicked "Send"' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'Not performed: only one action is taken per step.' },
          { type: 'text', text: 'The human answered your request: yes' },
          { type: 'text', text: 'Observation (step 2):\n[0] button "OK"' },
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'iVBORw0KGgo=' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: '(no answer)' }] },
      { role: 'user', content: [{ type: 'text', text: 'You must answer with exactly one tool call.' }] },
    ]);
  });

  it('returns text-only answers without tool calls', async () => {
    answer = { status: 200, body: message([{ type: 'text', text: 'Done, I think.' }], { input_tokens: 10, output_tokens: 4 }) };
    expect(await client().complete(REQUEST)).toMatchObject({ text: 'Done, I think.', toolCalls: [], usage: { inputTokens: 10, outputTokens: 4 } });
  });

  it.each([
    [401, 'authentication_error', 'LLM_AUTH_FAILED', false],
    [403, 'permission_error', 'LLM_AUTH_FAILED', false],
    [429, 'rate_limit_error', 'LLM_RATE_LIMITED', true],
    [400, 'invalid_request_error', 'LLM_BAD_REQUEST', false],
    [529, 'overloaded_error', 'LLM_ERROR', true],
  ])('maps HTTP %i to a TaskFailure', async (status, type, code, retryable) => {
    answer = { status, body: apiError(type, `failed for key ${API_KEY}`) };
    const err = await client()
      .complete(REQUEST)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskFailure);
    expect(err).toMatchObject({ code, retryable, details: { provider: 'anthropic', status } });
    expect((err as Error).message).not.toContain('test-secret');
  });

  it('rejects with an abort error when the signal fires', async () => {
    answer = { status: 200, body: message([]), delayMs: 5000 };
    const started = Date.now();
    const err = await client()
      .complete({ ...REQUEST, signal: AbortSignal.timeout(150) })
      .catch((e: unknown) => e);
    expect(isAbortError(err)).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('maps an unreachable endpoint to LLM_UNAVAILABLE', async () => {
    const err = await client('http://127.0.0.1:1')
      .complete(REQUEST)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'LLM_UNAVAILABLE', retryable: true });
  });
});
