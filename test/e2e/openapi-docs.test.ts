import { chromium } from 'playwright-core';
import { createServiceClient } from '../../clients/typescript';
import committed from '../../clients/typescript/openapi.json';
import { checkAgainstDocument } from '../support/openapi-check';
import { registerScript } from '../support/scripted-model';
import { createUser } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

/** The typed client of the repository, every JSON answer checked against the document. */
function client(apiKey?: string) {
  const api = createServiceClient(base(), apiKey);
  api.use(checkAgainstDocument);
  return api;
}

describe('OpenAPI document, reference page and typed client', () => {
  it('serves the document the typed client was generated from', async () => {
    const res = await fetch(`${base()}/openapi.json`);
    expect(res.status).toBe(200);
    const served = (await res.json()) as typeof committed;
    expect(served.openapi).toBe('3.1.0');
    expect(served.servers).toEqual([{ url: base() }]);
    expect({ ...served, servers: committed.servers }).toEqual(committed);
  });

  it('shows the reference page in Chromium, from the service alone (no CDN)', async () => {
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const requested: string[] = [];
      page.on('request', (r) => requested.push(r.url()));
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${base()}/docs`);
      await page.getByText('Browser agent service', { exact: false }).first().waitFor({ timeout: 30_000 });
      // An operation of each area is listed, and one opens with its request body schema.
      for (const path of ['/start/run-task', '/v1/chat/completions', '/cron-jobs/{id}/runs', '/environments/{id}/upload', '/mcp/sse']) {
        await page.locator('.opblock-summary-path', { hasText: new RegExp(`^${path.replace(/[{}/]/g, '\\$&')}$`) }).first().waitFor({ timeout: 10_000 });
      }
      await page.locator('.opblock-summary-path', { hasText: /^\/v1\/chat\/completions$/ }).first().click();
      await page.getByText('max_tokens', { exact: false }).first().waitFor({ timeout: 10_000 });
      expect(errors).toEqual([]);
      expect(requested.length).toBeGreaterThan(2);
      expect(requested.filter((u) => !u.startsWith(base()) && !u.startsWith('data:'))).toEqual([]);
      expect(requested).toContain(`${base()}/openapi.json`);
    } finally {
      await browser.close();
    }
  });

  it('drives the service through the typed client; every answer matches the document', async () => {
    const { apiKey } = await createUser({ balance: 10 });
    const api = client(apiKey);

    const health = await api.GET('/start/health');
    expect(health.data?.status).toBe('healthy');

    const created = await api.POST('/environments', { body: { name: 'typed client', description: 'made by the generated client' } });
    expect(created.response.status).toBe(200);
    const envId = created.data!.environment._id;
    const listed = await api.GET('/environments');
    expect(listed.data?.environments.map((e) => e._id)).toContain(envId);
    const one = await api.GET('/environments/{id}', { params: { path: { id: envId } } });
    expect(one.data?.environment.status).toBe('empty');
    const files = await api.GET('/environments/{id}/files', { params: { path: { id: envId } } });
    expect(files.data?.files).toEqual([]);
    expect((await api.GET('/profiles')).data?.profiles).toEqual([]);
    expect((await api.GET('/cron-jobs')).data?.cronJobs).toEqual([]);
    expect((await api.GET('/webhooks/secret')).data?.secret).toMatch(/^whsec_/);
    expect((await api.GET('/start/active-sockets')).data?.sessions).toEqual([]);
    expect((await api.DELETE('/environments/{id}', { params: { path: { id: envId } } })).data?.success).toBe(true);

    // Errors are typed and match the error envelope.
    const missing = await api.GET('/environments/{id}', { params: { path: { id: envId } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ success: false, code: 'ENVIRONMENT_NOT_FOUND' });
    const bad = await api.POST('/start/run-task', { body: { task: { prompt: 'x', maxDuration: 5 } } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.maxDuration', min: 1000, max: 300000 } });

    // A task, inline and polled.
    const t = token('typed');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'The page is titled {{find:Title: ([^\\n]+)}}' } }] });
    const ran = await api.POST('/start/run-task', { body: { task: { prompt: `${t} title?`, startingUrl: `${fixtures()}/about.html` } } });
    expect(ran.data).toMatchObject({ type: 'task_completed', data: { message: expect.stringContaining('The page is titled About') } });
    const { sessionId, taskId } = ran.data as { sessionId: string; taskId: string };
    const polled = await client().GET('/task/{sessionId}/{taskId}', { params: { path: { sessionId, taskId } } });
    expect(polled.data).toMatchObject({ status: 'task_completed', completedAt: expect.any(String) });

    // The OpenAI-compatible endpoint through the same client.
    const models = await api.GET('/v1/models');
    expect(models.data?.data[0].id).toBe('service-browser-1');
    const chat = await api.POST('/v1/chat/completions', { body: { model: 'service-browser-1', messages: [{ role: 'user', content: `${t} title again?` }] } });
    // The 200 is JSON, or an event stream (its events, to the client's types) with stream: true.
    if (!chat.data || !('service' in chat.data)) throw new Error(`expected a chat.completion, got ${JSON.stringify(chat.error ?? chat.data)}`);
    expect(chat.data.service.sessionId).toEqual(expect.any(String));
    // @ts-expect-error the document names the one model; another is answered with model_not_found
    const wrong = await api.POST('/v1/chat/completions', { body: { model: 'other', messages: [{ role: 'user', content: 'x' }] } });
    expect(wrong.error).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code: 'model_not_found' } });
  });
});
