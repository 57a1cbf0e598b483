import net from 'node:net';
import { recordedRequests, registerScript, requestText, startScriptedModel, type ScriptedModel, type Step } from '../../../test/support/scripted-model';
import { TaskFailure } from '../../contracts/errors';
import { isAbortError } from './errors';
import { createLlmClient } from './factory';
import { createOpenAiClient } from './openai.client';
import type { LlmClient, LlmMessage, LlmRequest, LlmToolSpec } from './types';

const API_KEY = 'sk-test-secret-key-0123456789';
const TOOLS: LlmToolSpec[] = [
  { name: 'click_element', description: 'Click an element', parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { index: { type: 'integer' } }, required: ['index'] } },
  { name: 'done', description: 'Finish', parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } },
];
const OBSERVATION = ['Observation (step 1):', '[0] link "Home"', '[1] textbox "Message" value="hi"', '[2] button "Send"', '[3] button "Send later"', 'Some visible text'].join('\n');

let model: ScriptedModel;
let tokens = 0;

beforeAll(async () => {
  model = await startScriptedModel();
});
afterAll(async () => {
  await model.close();
});

function client(overrides: Partial<Parameters<typeof createOpenAiClient>[0]> = {}): LlmClient {
  return createOpenAiClient({ baseURL: model.url, apiKey: API_KEY, model: 'scripted-model', maxRetries: 0, timeoutMs: 10_000, ...overrides });
}

/** Registers a script under a fresh token and returns a request whose task prompt carries it. */
async function scripted(steps: Step[], messages: LlmMessage[] = [], extra: { authFail?: boolean } = {}): Promise<{ token: string; req: LlmRequest }> {
  const token = `tok-${process.pid}-${++tokens}-${Date.now()}`;
  await registerScript(model.url, { match: token, steps, ...extra });
  const req: LlmRequest = { system: 'You drive a browser.', messages: [{ role: 'user', content: `New task: do it [${token}]` }, ...messages], tools: TOOLS, maxTokens: 500 };
  return { token, req };
}

async function failure(p: Promise<unknown>): Promise<TaskFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TaskFailure);
  return err as TaskFailure;
}

describe('OpenAI client against the scripted model', () => {
  it('returns the tool call with its arguments, the reported usage and the model', async () => {
    const { token, req } = await scripted([{ tool: 'done', args: { message: 'finished', success: true }, usage: { prompt_tokens: 123, completion_tokens: 7 } }]);
    const res = await client().complete(req);
    expect(res.toolCalls).toEqual([{ id: expect.stringMatching(/^call_/), name: 'done', arguments: expect.any(String) }]);
    expect(JSON.parse(res.toolCalls[0].arguments)).toEqual({ message: 'finished', success: true });
    expect(res.usage).toEqual({ inputTokens: 123, outputTokens: 7 });
    expect(res.model).toBe('scripted-model');

    const [sent] = await recordedRequests(model.url, token);
    expect(sent.step).toBe(0);
    expect(sent.body).toMatchObject({ model: 'scripted-model', max_tokens: 500, tool_choice: 'auto' });
    expect(sent.body.messages[0]).toEqual({ role: 'system', content: 'You drive a browser.' });
    expect(sent.body.tools[0]).toEqual({ type: 'function', function: { name: 'click_element', description: 'Click an element', parameters: { type: 'object', properties: { index: { type: 'integer' } }, required: ['index'] } } });
  });

  it('resolves {ref} against the observation lines: exact label first, then a case-insensitive part', async () => {
    const { req } = await scripted(
      [
        { tool: 'click_element', args: { index: { ref: 'Send' } } },
        { tool: 'click_element', args: { index: { ref: 'send LATER' } } },
        { tool: 'click_element', args: { index: { ref: 'Nowhere' } } },
      ],
      [{ role: 'user', content: OBSERVATION }],
    );
    const llm = client();
    const indexes = [];
    for (let i = 0; i < 4; i++) indexes.push(JSON.parse((await llm.complete(req)).toolCalls[0].arguments).index);
    // the last step repeats once the script runs out
    expect(indexes).toEqual([2, 3, -1, -1]);
  });

  it('fills {{find:...}} from the latest message that matches, and answers text-only and raw tool calls', async () => {
    const history: LlmMessage[] = [
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'done', arguments: '{"message":"The answer is 7"}' }] },
      { role: 'tool', toolCallId: 'c1', content: 'Task finished' },
      { role: 'user', content: 'Observation (step 2):\nThe answer is 42\n[0] button "OK"' },
    ];
    const { req } = await scripted([{ tool: 'done', args: { message: 'It is {{find:The answer is (\\d+)}}; {{find:zzz(\\d)}}' } }, { text: 'just talking' }, { rawToolCall: { name: 'done', arguments: '{"message": ' } }], history);
    const llm = client();
    expect(JSON.parse((await llm.complete(req)).toolCalls[0].arguments)).toEqual({ message: 'It is 42; <not found>' });
    const text = await llm.complete(req);
    expect(text).toMatchObject({ text: 'just talking', toolCalls: [] });
    expect((await llm.complete(req)).toolCalls[0]).toMatchObject({ name: 'done', arguments: '{"message": ' });
  });

  it('sends images as data URLs, assistant tool calls and tool results in the OpenAI format', async () => {
    const history: LlmMessage[] = [
      { role: 'assistant', content: '', toolCalls: [{ id: 'c9', name: 'click_element', arguments: '{"index":2}' }] },
      { role: 'tool', toolCallId: 'c9', content: 'Clicked' },
      { role: 'user', content: 'Observation (step 2):', image: 'iVBORw0KGgo=' },
    ];
    const { token, req } = await scripted([{ tool: 'done', args: { message: 'ok' } }], history);
    const res = await client().complete(req);
    const [sent] = await recordedRequests(model.url, token);
    expect(sent.body.messages.slice(2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c9', type: 'function', function: { name: 'click_element', arguments: '{"index":2}' } }] },
      { role: 'tool', tool_call_id: 'c9', content: 'Clicked' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Observation (step 2):' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,iVBORw0KGgo=' } },
        ],
      },
    ]);
    expect(requestText(sent)).toContain('click_element {"index":2}');
    expect(res.usage.outputTokens).toBe(20);
  });

  it('passes every tool call of one answer through, in order, each with its own id', async () => {
    const { req } = await scripted([
      {
        calls: [
          { tool: 'input_text', args: { index: 1, text: 'Ada' } },
          { tool: 'input_text', args: { index: 2, text: 'ada@example.com' } },
          { tool: 'click_element', args: { index: 3 } },
        ],
      },
    ]);
    const res = await client().complete(req);
    expect(res.toolCalls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
      ['input_text', { index: 1, text: 'Ada' }],
      ['input_text', { index: 2, text: 'ada@example.com' }],
      ['click_element', { index: 3 }],
    ]);
    expect(new Set(res.toolCalls.map((call) => call.id)).size).toBe(3);
  });

  it('switches to max_completion_tokens when the provider asks for it', async () => {
    const { token, req } = await scripted([
      { httpError: 400, message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead." },
      { tool: 'done', args: { message: 'ok' } },
    ]);
    const llm = client();
    expect((await llm.complete(req)).toolCalls[0].name).toBe('done');
    const sent = await recordedRequests(model.url, token);
    expect(sent.map((r) => [r.body.max_tokens, r.body.max_completion_tokens])).toEqual([
      [500, undefined],
      [undefined, 500],
    ]);
  });

  it('says "thought": false at a brief call only to the local model role, and never to a hosted provider', async () => {
    const { token, req } = await scripted([{ tool: 'done', args: { message: 'a' } }, { tool: 'done', args: { message: 'b' } }, { tool: 'done', args: { message: 'c' } }]);
    const local = createLlmClient({ LLM_PROVIDER: 'local', LOCAL_MODEL_URL: model.url, LLM_API_KEY: '', LLM_MODEL: 'x', LLM_MAX_RETRIES: 0, LLM_TIMEOUT_MS: 10_000 });
    await local.complete({ ...req, brief: true });
    await local.complete({ ...req, brief: false });
    await client().complete({ ...req, brief: true });
    const sent = await recordedRequests(model.url, token);
    expect(sent.map((r) => r.body.thought)).toEqual([false, undefined, undefined]);
    // LLM_THOUGHT=always: the local model thinks at every call
    const { token: always, req: again } = await scripted([{ tool: 'done', args: { message: 'a' } }]);
    await createLlmClient({ LLM_PROVIDER: 'local', LOCAL_MODEL_URL: model.url, LLM_API_KEY: '', LLM_MODEL: 'x', LLM_MAX_RETRIES: 0, LLM_TIMEOUT_MS: 10_000, LLM_THOUGHT: 'always' }).complete({ ...again, brief: true });
    expect((await recordedRequests(model.url, always))[0].body.thought).toBeUndefined();
  });

  it('answers requests that match no script with done, reporting a quarter of the characters as input', async () => {
    const content = `unmatched-${Date.now()}`;
    const res = await client().complete({ system: 'system', messages: [{ role: 'user', content }], tools: TOOLS, maxTokens: 100 });
    expect(JSON.parse(res.toolCalls[0].arguments)).toMatchObject({ message: 'no script matched' });
    expect(res.usage).toEqual({ inputTokens: Math.ceil((6 + content.length) / 4), outputTokens: 20 });
  });

  it('picks the script of the latest message that carries a token', async () => {
    const first = await scripted([{ tool: 'done', args: { message: 'first' } }]);
    const second = await scripted([{ tool: 'done', args: { message: 'second' } }]);
    const followUp: LlmRequest = { ...first.req, messages: [...first.req.messages, ...second.req.messages] };
    expect(JSON.parse((await client().complete(followUp)).toolCalls[0].arguments)).toEqual({ message: 'second' });
    expect(await recordedRequests(model.url, first.token)).toHaveLength(0);
    expect(await recordedRequests(model.url, second.token)).toHaveLength(1);
    expect(model.requests.some((r) => r.match === second.token)).toBe(true);
  });
});

describe('OpenAI client errors', () => {
  it('maps 401 (and authFail scripts) to LLM_AUTH_FAILED without leaking the key', async () => {
    const { req } = await scripted([{ httpError: 401, message: `Incorrect API key provided: ${API_KEY}. Bearer ${API_KEY}` }]);
    const err = await failure(client().complete(req));
    expect(err).toMatchObject({ code: 'LLM_AUTH_FAILED', retryable: false, details: { provider: 'openai', status: 401, providerCode: 'invalid_api_key' } });
    expect(err.message).toContain('Incorrect API key provided');
    expect(err.message).not.toContain('test-secret');
    expect(JSON.stringify(err.toBody())).not.toContain('test-secret');

    const denied = await scripted([{ tool: 'done', args: { message: 'unreachable' } }], [], { authFail: true });
    expect(await failure(client().complete(denied.req))).toMatchObject({ code: 'LLM_AUTH_FAILED' });
  });

  it('maps 429 to LLM_RATE_LIMITED, 5xx to LLM_ERROR (both retryable) and 400 to LLM_BAD_REQUEST', async () => {
    const { req } = await scripted([{ httpError: 429 }, { httpError: 500 }, { httpError: 400, message: "This model's maximum context length is 128000 tokens." }]);
    const llm = client();
    expect(await failure(llm.complete(req))).toMatchObject({ code: 'LLM_RATE_LIMITED', retryable: true });
    expect(await failure(llm.complete(req))).toMatchObject({ code: 'LLM_ERROR', retryable: true });
    const bad = await failure(llm.complete(req));
    expect(bad).toMatchObject({ code: 'LLM_BAD_REQUEST', retryable: false });
    expect(bad.message).toContain('maximum context length');
  });

  it('lets the SDK retry before giving up', async () => {
    const { token, req } = await scripted([{ httpError: 503 }, { tool: 'done', args: { message: 'second try' } }]);
    const res = await client({ maxRetries: 1 }).complete(req);
    expect(JSON.parse(res.toolCalls[0].arguments)).toEqual({ message: 'second try' });
    expect(await recordedRequests(model.url, token)).toHaveLength(2);
  });

  it('maps a closed port to LLM_UNAVAILABLE', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const err = await failure(client({ baseURL: `http://127.0.0.1:${port}/v1` }).complete({ system: 's', messages: [{ role: 'user', content: 'x' }], tools: [], maxTokens: 10 }));
    expect(err).toMatchObject({ code: 'LLM_UNAVAILABLE', retryable: true });
    expect(err.message).toContain(`127.0.0.1:${port}`);
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('maps a model slower than the timeout to LLM_UNAVAILABLE', async () => {
    const { req } = await scripted([{ delayMs: 3000, tool: 'done', args: { message: 'late' } }]);
    const started = Date.now();
    const err = await failure(client({ timeoutMs: 300 }).complete(req));
    expect(err).toMatchObject({ code: 'LLM_UNAVAILABLE', retryable: true });
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('rejects quickly with an abort error when the signal fires during a slow answer', async () => {
    const { req } = await scripted([{ delayMs: 5000, tool: 'done', args: { message: 'late' } }]);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    const err = await client({ maxRetries: 2 })
      .complete({ ...req, signal: controller.signal })
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(isAbortError(err)).toBe(true);
    expect(err).not.toBeInstanceOf(TaskFailure);
  });

  it('rejects at once when the signal has already fired', async () => {
    const { req } = await scripted([{ tool: 'done', args: { message: 'x' } }]);
    const err = await client()
      .complete({ ...req, signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(isAbortError(err)).toBe(true);
  });
});

describe('createLlmClient', () => {
  it('builds an OpenAI-compatible client without an API key (local servers)', async () => {
    const { token, req } = await scripted([{ tool: 'done', args: { message: 'keyless' } }]);
    const llm = createLlmClient({ LLM_PROVIDER: 'openai', LLM_BASE_URL: model.url, LLM_API_KEY: '', LLM_MODEL: 'llama3.1', LLM_MAX_RETRIES: 0, LLM_TIMEOUT_MS: 5000 });
    expect(llm.model).toBe('llama3.1');
    const res = await llm.complete(req);
    expect(res.model).toBe('llama3.1');
    expect((await recordedRequests(model.url, token))[0].body.model).toBe('llama3.1');
  });

  it('builds an Anthropic client', () => {
    const llm = createLlmClient({ LLM_PROVIDER: 'anthropic', LLM_API_KEY: '', LLM_MODEL: 'claude-sonnet-4-5', LLM_MAX_RETRIES: 0, LLM_TIMEOUT_MS: 5000 });
    expect(llm.model).toBe('claude-sonnet-4-5');
  });
});
