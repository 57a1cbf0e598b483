import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { api, waitFor } from '../support/http';
import { checkResponse } from '../support/openapi-check';
import { createUser, startService, type ServiceProcess } from '../support/service';
import { recordedRequests, registerScript, requestText } from '../support/scripted-model';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
/** The SDK's fetch, every answer checked against the OpenAPI document on the way. */
const checkedFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const type = res.headers.get('content-type') ?? '';
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  checkResponse(init?.method ?? 'GET', url, res.status, type.includes('application/json') ? await res.clone().json() : undefined, type);
  return res;
};
// The SDK's own retries would run a task twice; every test sees each answer as it is.
const client = (apiKey: string, baseURL = `${base()}/v1`) => new OpenAI({ apiKey, baseURL, maxRetries: 0, fetch: checkedFetch });
const MODEL = 'service-browser-1';

const liveSessions = async (key: string): Promise<string[]> => (await api(base(), 'GET', '/start/active-sockets', { key })).body.sessions.map((s: { sessionId: string }) => s.sessionId);

async function titleScript(t: string, steps: Record<string, unknown>[] = []) {
  await registerScript(model(), {
    match: t,
    steps: [
      { tool: 'navigate', args: { url: `${fixtures()}/about.html` }, usage: { prompt_tokens: 1000, completion_tokens: 100 } },
      ...steps,
      { tool: 'done', args: { message: 'The page title is "{{find:Title: ([^\\n]+)}}". It is the about page of the fixture site, shown to a user who asked for it.' }, usage: { prompt_tokens: 1000, completion_tokens: 100 } },
    ],
  });
}

describe('OpenAI-compatible endpoint', () => {
  it('lists the one model; a wrong model id is 400 model_not_found; a wrong key is 401, all in the OpenAI shape', async () => {
    const { apiKey } = await createUser();
    const openai = client(apiKey);
    const models = await openai.models.list();
    expect(models.data).toEqual([{ id: MODEL, object: 'model', created: expect.any(Number), owned_by: expect.any(String) }]);
    expect((await openai.models.retrieve(MODEL)).id).toBe(MODEL);

    const wrong = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(OpenAI.BadRequestError);
    expect((wrong as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({ message: expect.stringContaining('gpt-4o'), type: 'invalid_request_error', code: 'model_not_found' });

    const noKey = await client('bas_wrong').chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] }).catch((e: unknown) => e);
    expect(noKey).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((noKey as InstanceType<typeof OpenAI.AuthenticationError>).error).toEqual({ message: 'Invalid or revoked API key', type: 'authentication_error', code: 'invalid_api_key' });

    const raw = await api(base(), 'POST', '/v1/chat/completions', { key: apiKey, rawBody: '{"model":' });
    expect(raw.status).toBe(400);
    expect(raw.body).toEqual({ error: { message: 'Malformed JSON in request body', type: 'invalid_request_error', code: 'invalid_params' } });
    const noUser = await api(base(), 'POST', '/v1/chat/completions', { key: apiKey, body: { model: MODEL, messages: [{ role: 'system', content: 'only context' }] } });
    expect(noUser.status).toBe(400);
    expect(noUser.body.error).toMatchObject({ type: 'invalid_request_error', code: 'missing_required_field' });
  });

  it('answers a chat completion from a browser task, with usage and the service object, and ends the session', async () => {
    const { apiKey } = await createUser({ balance: 10 });
    const t = token('chat');
    await titleScript(t);
    const openai = client(apiKey);
    const res = await openai.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Answer in one sentence.' },
        { role: 'user', content: 'I will ask about a page.' },
        { role: 'assistant', content: 'Go ahead.' },
        { role: 'user', content: `${t} What is the title of the about page?` },
      ],
      max_tokens: 300,
    });
    expect(res).toMatchObject({
      object: 'chat.completion',
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: expect.stringContaining('The page title is "About') }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2000, completion_tokens: 200, total_tokens: 2200 },
    });
    const service = (res as unknown as { service: { sessionId: string; taskId: string; cost: number } }).service;
    expect(service).toEqual({ sessionId: expect.any(String), taskId: expect.any(String), cost: expect.any(Number) });
    // 1 USD per million input tokens, 2 per million output tokens in the test config
    expect(service.cost).toBeCloseTo(0.0024, 6);

    // The last user message is the task, the rest is context; max_tokens caps the model's output.
    const sent = await recordedRequests(model(), t);
    expect(sent.length).toBe(2);
    const text = requestText(sent[0]);
    expect(text).toContain('What is the title of the about page?');
    expect(text).toContain('Answer in one sentence.');
    expect(text).toContain('Go ahead.');
    expect(sent[0].body.max_tokens ?? sent[0].body.max_completion_tokens).toBeLessThanOrEqual(300);

    // The task's result stays readable; the session is gone.
    const polled = await api(base(), 'GET', `/task/${service.sessionId}/${service.taskId}`);
    expect(polled.body).toMatchObject({ type: 'task_completed', data: { message: res.choices[0].message.content } });
    await waitFor(async () => !(await liveSessions(apiKey)).includes(service.sessionId), 10_000);
    // it ended because its one task ended
    const timeline = await waitFor(async () => {
      const r = await api(base(), 'GET', `/start/sessions/${service.sessionId}/events`, { key: apiKey });
      return r.body.events?.some((e: any) => e.event === 'end_session') ? r.body : null;
    }, 10_000);
    expect(timeline).toMatchObject({ status: 'completed', endReason: 'completed' });
    expect(timeline.events.at(-1)).toMatchObject({ event: 'end_session', reason: 'completed' });
  });

  it('streams the answer: the role first, content deltas, finish_reason stop, usage, then [DONE]', async () => {
    const { apiKey } = await createUser({ balance: 10 });
    const t = token('stream');
    await titleScript(t, [{ tool: 'scroll', args: { direction: 'down' }, usage: { prompt_tokens: 1000, completion_tokens: 100 } }]);
    const stream = await client(apiKey).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: `${t} What is the title of the about page?` }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks[0].object).toBe('chat.completion.chunk');
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(content).toMatch(/^The page title is "About.*asked for it\.$/);
    // the answer comes in more than one delta
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(1);
    const finishing = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finishing.map((c) => c.choices[0].finish_reason)).toEqual(['stop']);
    const service = (finishing[0] as unknown as { service: { sessionId: string; taskId: string; cost: number } }).service;
    expect(service).toEqual({ sessionId: expect.any(String), taskId: expect.any(String), cost: expect.any(Number) });
    expect(chunks[chunks.length - 1]).toMatchObject({ choices: [], usage: { prompt_tokens: 3000, completion_tokens: 300, total_tokens: 3300 } });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    await waitFor(async () => !(await liveSessions(apiKey)).includes(service.sessionId), 10_000);
  });

  it('sends the agent progress as SSE comments and ends with data: [DONE] on the wire', async () => {
    const { apiKey } = await createUser({ balance: 10 });
    const t = token('wire');
    await titleScript(t);
    const res = await fetch(`${base()}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: `${t} title please` }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const body = await res.text();
    const events = body.split('\n\n').filter(Boolean);
    expect(events[0]).toMatch(/^data: \{.*"role":"assistant"/);
    expect(events.some((e) => /^: action navigate /.test(e))).toBe(true);
    expect(events[events.length - 1]).toBe('data: [DONE]');
    // progress comes before the answer
    const firstComment = events.findIndex((e) => e.startsWith(':'));
    const firstContent = events.findIndex((e) => /"content":"[^"]/.test(e));
    expect(firstComment).toBeGreaterThan(0);
    expect(firstComment).toBeLessThan(firstContent);
  });

  it('stops the task and frees the session when a streaming client disconnects', async () => {
    const { apiKey } = await createUser({ balance: 10 });
    const t = token('leave');
    await registerScript(model(), { match: t, steps: [{ tool: 'wait', args: { seconds: 0.5 }, delayMs: 200 }] });
    const controller = new AbortController();
    const stream = await client(apiKey).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: `${t} wait forever` }], stream: true }, { signal: controller.signal });
    const { value: first } = await stream[Symbol.asyncIterator]().next();
    const { sessionId, taskId } = (first as unknown as { service: { sessionId: string; taskId: string } }).service;
    expect(await liveSessions(apiKey)).toContain(sessionId);
    // the agent is at work
    await waitFor(async () => (await recordedRequests(model(), t)).length >= 2, 20_000);
    controller.abort();

    await waitFor(async () => !(await liveSessions(apiKey)).includes(sessionId), 15_000);
    const polled = await waitFor(async () => {
      const r = await api(base(), 'GET', `/task/${sessionId}/${taskId}`);
      return ['stopped', 'failed'].includes(r.body.status) ? r.body : null;
    }, 10_000);
    expect(polled.status).toBe('stopped');
    const after = (await recordedRequests(model(), t)).length;
    await new Promise((r) => setTimeout(r, 1500));
    expect((await recordedRequests(model(), t)).length).toBe(after);
  });

  it('ends the session within 15 s when an openai Python SDK client closes the stream after the first chunk, or gives up on a plain request', async () => {
    const python = path.join(process.env.BAS_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'browser-agent-service'), 'py/bin/python');
    expect(existsSync(python)).toBe(true);
    const { apiKey } = await createUser({ balance: 10 });
    const streamed = token('pyleave');
    const plain = token('pygiveup');
    for (const t of [streamed, plain]) await registerScript(model(), { match: t, steps: [{ tool: 'wait', args: { seconds: 0.5 }, delayMs: 200 }] });
    const out = await new Promise<string>((resolve, reject) =>
      execFile(python, [path.join(__dirname, '../support/openai-python-leave.py'), base(), apiKey, `${streamed} wait forever`, `${plain} wait forever`], { timeout: 60_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    const { streamSessionId, streamTaskId, streamLeftAt, plainTimedOut, plainLeftAt } = JSON.parse(out);
    expect(plainTimedOut).toBe(true);
    // The streamed one's session: ended within 15 s of the close (the plain request took 3 s of them).
    await waitFor(async () => !(await liveSessions(apiKey)).includes(streamSessionId), Math.max(1000, streamLeftAt * 1000 + 15_000 - Date.now()));
    // Its task (left before it began) reads stopped, like any task of a client that left.
    const polled = await waitFor(async () => {
      const r = await api(base(), 'GET', `/task/${streamSessionId}/${streamTaskId}`);
      return ['stopped', 'failed'].includes(r.body.status) ? r.body : null;
    }, 10_000);
    expect(polled.status).toBe('stopped');
    // The plain one's session (the only other this user has): ended within 15 s of the time-out.
    await waitFor(async () => (await liveSessions(apiKey)).length === 0, Math.max(1000, plainLeftAt * 1000 + 15_000 - Date.now()));
    const calls = (await recordedRequests(model(), streamed)).length + (await recordedRequests(model(), plain)).length;
    await new Promise((r) => setTimeout(r, 1500));
    expect((await recordedRequests(model(), streamed)).length + (await recordedRequests(model(), plain)).length).toBe(calls);
  });

  it('ends the request with the guardrail error body when the agent needs a human, streaming or not', async () => {
    const { apiKey } = await createUser({ balance: 10 });
    const t = token('guard');
    await registerScript(model(), { match: t, steps: [{ tool: 'request_human_input', args: { type: 'two_factor_code', value: 'Enter the one-time code sent to your phone' } }] });
    const openai = client(apiKey);
    const plain = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: `${t} log in` }] }).catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(OpenAI.APIError);
    const plainError = plain as InstanceType<typeof OpenAI.APIError>;
    expect(plainError.status).toBe(422);
    expect(plainError.error).toEqual({ message: 'A guardrail was triggered: Enter the one-time code sent to your phone', type: 'guardrail_error', code: 'guardrail_triggered' });

    const stream = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: `${t} log in again` }], stream: true });
    const seen: unknown[] = [];
    const streamed = await (async () => {
      for await (const c of stream) seen.push(c);
    })().catch((e: unknown) => e);
    expect(seen.length).toBe(1);
    expect(streamed).toBeInstanceOf(OpenAI.APIError);
    expect((streamed as InstanceType<typeof OpenAI.APIError>).error).toEqual({ message: 'A guardrail was triggered: Enter the one-time code sent to your phone', type: 'guardrail_error', code: 'guardrail_triggered' });
    const sessionId = (seen[0] as { service: { sessionId: string } }).service.sessionId;
    await waitFor(async () => !(await liveSessions(apiKey)).includes(sessionId), 10_000);
    expect(await liveSessions(apiKey)).toEqual([]);
  });

  it('answers 402 without balance and counts against the per-user rate limit (429), in the OpenAI shape', async () => {
    const poor = await createUser({ balance: 0 });
    const broke = await client(poor.apiKey).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'anything' }] }).catch((e: unknown) => e);
    expect(broke).toBeInstanceOf(OpenAI.APIError);
    expect((broke as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((broke as InstanceType<typeof OpenAI.APIError>).error).toEqual({ message: 'Insufficient balance', type: 'insufficient_quota', code: 'insufficient_balance' });

    const { apiKey } = await createUser();
    const openai = client(apiKey);
    // Every request counts, failed ones included, and run-task shares the counter.
    expect((await api(base(), 'POST', '/start/run-task', { key: apiKey, body: {} })).status).toBe(400);
    for (let i = 0; i < 9; i++) await openai.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }).catch(() => undefined);
    const limited = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).error).toEqual({ message: expect.any(String), type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toMatch(/^\d+$/);
    // models are not limited
    expect((await openai.models.list()).data).toHaveLength(1);
  });

  it('works unchanged from the official openai Python SDK, streaming and not', async () => {
    const python = path.join(process.env.BAS_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'browser-agent-service'), 'py/bin/python');
    // scripts/test.sh installs it (ensure_python_openai in scripts/lib.sh)
    expect(existsSync(python)).toBe(true);
    const { apiKey } = await createUser({ balance: 10 });
    const t1 = token('py');
    const t2 = token('pystream');
    await titleScript(t1);
    await titleScript(t2);
    const out = await new Promise<string>((resolve, reject) =>
      execFile(python, [path.join(__dirname, '../support/openai-python-sdk.py'), base(), apiKey, `${t1} What is the title of the about page?`, `${t2} And its title again?`], { timeout: 90_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    const { models, completion, chunks, wrongModel } = JSON.parse(out);
    expect(models).toEqual([MODEL]);

    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: expect.stringContaining('The page title is "About') }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2000, completion_tokens: 200, total_tokens: 2200 },
    });
    // the SDK keeps the extra object
    expect(completion.service).toEqual({ sessionId: expect.any(String), taskId: expect.any(String), cost: expect.any(Number) });
    expect(completion.service.cost).toBeCloseTo(0.0024, 6);
    const polled = await api(base(), 'GET', `/task/${completion.service.sessionId}/${completion.service.taskId}`);
    expect(polled.body).toMatchObject({ type: 'task_completed', data: { message: completion.choices[0].message.content } });

    expect(chunks[0]).toMatchObject({ object: 'chat.completion.chunk', choices: [{ delta: { role: 'assistant' } }] });
    const content = chunks.map((c: { choices: { delta: { content?: string | null } }[] }) => c.choices[0]?.delta.content ?? '').join('');
    expect(content).toMatch(/^The page title is "About.*asked for it\.$/);
    expect(chunks.filter((c: { choices: { delta: { content?: string | null } }[] }) => c.choices[0]?.delta.content).length).toBeGreaterThan(1);
    const finishing = chunks.filter((c: { choices: { finish_reason?: string | null }[] }) => c.choices[0]?.finish_reason);
    expect(finishing.map((c: { choices: { finish_reason: string }[] }) => c.choices[0].finish_reason)).toEqual(['stop']);
    expect(finishing[0].service).toEqual({ sessionId: expect.any(String), taskId: expect.any(String), cost: expect.any(Number) });
    expect(finishing[0].service.sessionId).not.toBe(completion.service.sessionId);
    expect(chunks[chunks.length - 1]).toMatchObject({ choices: [], usage: { prompt_tokens: 2000, completion_tokens: 200, total_tokens: 2200 } });

    expect(wrongModel).toMatchObject({ class: 'BadRequestError', status: 400, body: { type: 'invalid_request_error', code: 'model_not_found' } });
    await waitFor(async () => (await liveSessions(apiKey)).length === 0, 10_000);
  });

  describe('without browser capacity', () => {
    // An API process with its own worker registry (Redis database) and queue: no worker serves it.
    let apiOnly: ServiceProcess;
    beforeAll(async () => {
      apiOnly = await startService({ ROLE: 'api', REDIS_URL: `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/11`, TEMPORAL_TASK_QUEUE: `no-capacity-${Date.now()}` });
    });
    afterAll(async () => {
      await apiOnly?.stop();
    });

    it('answers 503 in the OpenAI shape, which the SDK raises as an InternalServerError', async () => {
      const { apiKey } = await createUser({ balance: 10 });
      const openai = client(apiKey, `${apiOnly.baseUrl}/v1`);
      const refused = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'open the about page' }] }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.InternalServerError);
      expect((refused as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(503);
      expect((refused as InstanceType<typeof OpenAI.InternalServerError>).error).toEqual({ message: expect.any(String), type: 'service_unavailable_error', code: 'no_instances_available' });
      // streaming too: refused before the stream starts
      const streamed = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'open it' }], stream: true }).catch((e: unknown) => e);
      expect(streamed).toBeInstanceOf(OpenAI.InternalServerError);
      expect((streamed as InstanceType<typeof OpenAI.InternalServerError>).error).toMatchObject({ type: 'service_unavailable_error', code: 'no_instances_available' });
      expect((await api(apiOnly.baseUrl, 'GET', '/start/active-sockets', { key: apiKey })).body.sessions).toEqual([]);
    });
  });
});
