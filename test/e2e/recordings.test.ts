/**
 * Recordings and replays end to end: a task's actions are recorded with what they acted on,
 * a replay performs them again without the model (the scripted model's request count proves
 * it), a changed page is repaired by the agent and the repaired run is what the next replay
 * repeats. Real API, Temporal, worker and Chromium against a local order site.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { MongoClient, type Db } from 'mongodb';
import { chromium } from 'playwright-core';
import jpeg from 'jpeg-js';
import { api, waitFor } from '../support/http';
import { allowedPort } from '../support/ports';
import { recordedRequests, registerScript } from '../support/scripted-model';
import { createUser, ROOT } from '../support/service';
import { startReceiver } from '../support/webhook-receiver';

const base = () => process.env.TEST_API_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
const PASSWORD = 'Tr0ub4dor-replay-9931';

/** The order site: `changed` renames and moves the order button (and wraps it in other markup). */
function orderPage(changed: boolean): string {
  const button = changed ? '<div class="actions"><span><button type="submit" form="order">Confirm purchase</button></span></div>' : '';
  return `<!doctype html><html><head><meta charset="utf-8"><title>Order</title></head><body>
    <h1>Order form</h1>${button}
    <form id="order" action="/submitted" method="get">
      <p><label for="name">Name</label> <input id="name" name="name" autocomplete="off"></p>
      <p><label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="off"></p>
      <p><label for="plan">Plan</label> <select id="plan" name="plan"><option value="basic">Basic</option><option value="pro">Pro</option></select></p>
      ${changed ? '' : '<p><button type="submit">Place order</button></p>'}
    </form></body></html>`;
}

let site: { url: string; changed: boolean; orders: URLSearchParams[]; close(): Promise<void> };
let mongo: MongoClient;
let db: Db;

beforeAll(async () => {
  const orders: URLSearchParams[] = [];
  const state = { changed: false };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/order.html') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(orderPage(state.changed));
    if (url.pathname === '/submitted') {
      orders.push(url.searchParams);
      const n = 4700 + orders.length;
      return void res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><title>Thanks</title><h1>Order placed</h1><p>Order number ${n} for ${url.searchParams.get('name')} on plan ${url.searchParams.get('plan')}.</p>`);
    }
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(allowedPort(), '127.0.0.1', r));
  site = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get changed() {
      return state.changed;
    },
    set changed(v: boolean) {
      state.changed = v;
    },
    orders,
    close: () => new Promise((r) => server.close(() => r())),
  };
  mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test');
  db = mongo.db();
});
afterAll(async () => {
  await site.close();
  await mongo.close();
});

const runTask = (key: string, task: Record<string, unknown>) => api(base(), 'POST', '/start/run-task', { key, body: { task } });
const recording = (key: string | undefined, sessionId: string, taskId: string, query = '') => api(base(), 'GET', `/task/${sessionId}/${taskId}/recording${query}`, { key });
const modelCalls = async (match: string) => (await recordedRequests(model(), match)).length;
async function finished(res: { status: number; body: any }): Promise<any> {
  if (res.status !== 200) throw new Error(`run-task answered ${res.status}: ${JSON.stringify(res.body)}`);
  const { sessionId, taskId } = res.body;
  return waitFor(async () => {
    const r = await api(base(), 'GET', `/task/${sessionId}/${taskId}`);
    return ['task_completed', 'failed', 'stopped'].includes(r.body.status) ? r.body : null;
  }, 60_000);
}
const actionEvents = async (sessionId: string) =>
  (await db.collection<any>('events').find({ sessionId, 'payload.type': 'action' }).sort({ seq: 1 }).toArray()).map((e) => e.payload.data);

describe('recordings and replays', () => {
  it('records a form task, replays it without the model, repairs a changed page and replays the repair', async () => {
    site.changed = false;
    const { apiKey: key } = await createUser();
    const t = token('order');
    const secrets = [{ match: new URL(site.url).host, fields: { password: PASSWORD } }];
    await registerScript(model(), {
      match: t,
      steps: [
        { text: 'Filling in the name first.', tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Ada' } },
        { tool: 'input_text', args: { index: { ref: 'Password' }, text: '<secret>password</secret>' } },
        { tool: 'select_option', args: { index: { ref: 'Plan' }, value: 'Pro' } },
        { tool: 'click_element', args: { index: { ref: 'Place order' } } },
        { tool: 'done', args: { message: 'Order placed' } },
      ],
    });
    const first = await finished(await runTask(key, { prompt: `${t} order the pro plan for Ada`, startingUrl: `${site.url}/order.html`, secrets }));
    expect(first).toMatchObject({ status: 'task_completed', data: { message: 'Order placed' } });
    expect(site.orders).toHaveLength(1);
    expect(Object.fromEntries(site.orders[0])).toEqual({ name: 'Ada', password: PASSWORD, plan: 'pro' });
    expect(await modelCalls(t)).toBe(5);

    // The recording: each action with what it acted on; the secret as its placeholder.
    const rec = await recording(key, first.sessionId, first.taskId);
    expect(rec.status).toBe(200);
    expect(rec.body).toMatchObject({ success: true, sessionId: first.sessionId, taskId: first.taskId, status: 'task_completed' });
    const steps = rec.body.steps;
    expect(steps.map((s: any) => [s.seq, s.by, s.action, s.outcome])).toEqual([
      [0, 'agent', 'input_text', 'ok'],
      [1, 'agent', 'input_text', 'ok'],
      [2, 'agent', 'select_option', 'ok'],
      [3, 'agent', 'click_element', 'ok'],
      [4, 'agent', 'done', 'ok'],
    ]);
    expect(steps[0]).toMatchObject({
      args: { text: 'Ada', clear: true },
      element: { role: 'textbox', name: 'Name', label: 'Name', id: 'name', fieldName: 'name', tag: 'INPUT', inputType: 'text', css: expect.stringContaining('input') },
      urlBefore: `${site.url}/order.html`,
      reasoning: 'Filling in the name first.',
    });
    expect(steps[0].args).not.toHaveProperty('index');
    expect(steps[0].element.box.width).toBeGreaterThan(0);
    expect(steps[1].args.text).toBe('<secret>password</secret>');
    expect(steps[2]).toMatchObject({ args: { value: 'Pro' }, element: { tag: 'SELECT', label: 'Plan' } });
    expect(steps[3]).toMatchObject({ element: { role: 'button', name: 'Place order', tag: 'BUTTON' }, urlAfter: expect.stringContaining(`${site.url}/submitted?`) });
    expect(steps[4].args).toMatchObject({ message: 'Order placed' });
    expect(JSON.stringify(rec.body)).not.toContain(PASSWORD);

    // Only the owner reads it.
    const other = await createUser();
    expect((await recording(other.apiKey, first.sessionId, first.taskId)).status).toBe(404);
    expect((await recording(key, 'ses_unknown', first.taskId)).status).toBe(404);
    expect((await recording(undefined, first.sessionId, first.taskId)).status).toBe(401);
    expect((await recording(key, first.sessionId, first.taskId, '?format=pdf')).status).toBe(400);

    // A replay: no model call; the order really placed again, with the secret typed in.
    const replay = await finished(await runTask(key, { replayOf: first.taskId, secrets }));
    expect(replay).toMatchObject({ status: 'task_completed', data: { message: 'Order placed' }, usage: { replayed_steps: 5, agent_steps: 0, prompt_tokens: 0 } });
    expect(await modelCalls(t)).toBe(5);
    expect(site.orders).toHaveLength(2);
    expect(Object.fromEntries(site.orders[1])).toEqual({ name: 'Ada', password: PASSWORD, plan: 'pro' });
    expect((await actionEvents(replay.sessionId)).map((d) => [d.name, d.by])).toEqual([
      ['input_text', 'replayed'],
      ['input_text', 'replayed'],
      ['select_option', 'replayed'],
      ['click_element', 'replayed'],
      ['done', 'replayed'],
    ]);
    const replayRec = (await recording(key, replay.sessionId, replay.taskId)).body;
    expect(replayRec.replayOf).toBe(first.taskId);
    expect(replayRec.steps.map((s: any) => s.by)).toEqual(['replay', 'replay', 'replay', 'replay', 'replay']);

    // The page changed: the order button was renamed and moved. The first three steps still
    // match; the agent repairs the fourth and finishes.
    site.changed = true;
    await registerScript(model(), { match: t, steps: [{ tool: 'click_element', args: { index: { ref: 'Confirm purchase' } } }, { tool: 'done', args: { message: 'Order placed' } }] });
    const repaired = await finished(await runTask(key, { replayOf: first.taskId, secrets }));
    expect(repaired).toMatchObject({ status: 'task_completed', usage: { replayed_steps: 3, agent_steps: 2 } });
    expect(site.orders).toHaveLength(3);
    expect(Object.fromEntries(site.orders[2])).toEqual({ name: 'Ada', password: PASSWORD, plan: 'pro' });
    const repairCalls = (await recordedRequests(model(), t)).slice(5);
    expect(repairCalls).toHaveLength(2);
    // The agent was told why, and given the original prompt.
    const told = JSON.stringify(repairCalls[0].body.messages);
    expect(told).toContain('order the pro plan for Ada');
    expect(told).toContain('could not be performed');
    expect(told).toContain('Place order');
    expect((await actionEvents(repaired.sessionId)).map((d) => d.by)).toEqual(['replayed', 'replayed', 'replayed', 'agent', 'agent']);

    // The next replay of the first task repeats the repaired run: no model call again.
    const again = await finished(await runTask(key, { replayOf: first.taskId, secrets }));
    expect(again).toMatchObject({ status: 'task_completed', usage: { replayed_steps: 5, agent_steps: 0 } });
    expect(await modelCalls(t)).toBe(7);
    expect(site.orders).toHaveLength(4);
    expect(site.orders[3].get('plan')).toBe('pro');
  }, 240_000);

  it('fills a two-field form and sends it from one model answer: three steps recorded, replayable, two model calls', async () => {
    site.changed = false;
    const { apiKey: key } = await createUser();
    const t = token('onelist');
    const secrets = [{ match: new URL(site.url).host, fields: { password: PASSWORD } }];
    await registerScript(model(), {
      match: t,
      steps: [
        {
          text: 'Filling the form and sending it.',
          calls: [
            { tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Ada' } },
            { tool: 'input_text', args: { index: { ref: 'Password' }, text: '<secret>password</secret>' } },
            { tool: 'click_element', args: { index: { ref: 'Place order' } } },
          ],
        },
        { tool: 'done', args: { message: 'Order {{find:Order number (\\d+)}} placed' } },
      ],
    });
    const first = await finished(await runTask(key, { prompt: `${t} order for Ada`, startingUrl: `${site.url}/order.html`, secrets }));
    expect(first).toMatchObject({ status: 'task_completed', data: { message: expect.stringMatching(/^Order \d+ placed$/) } });
    expect(await modelCalls(t)).toBe(2);
    const orders = site.orders.length;
    expect(Object.fromEntries(site.orders[orders - 1])).toEqual({ name: 'Ada', password: PASSWORD, plan: 'basic' });
    expect((await actionEvents(first.sessionId)).map((d) => d.name)).toEqual(['input_text', 'input_text', 'click_element', 'done']);
    const steps = (await recording(key, first.sessionId, first.taskId)).body.steps;
    expect(steps.map((s: any) => [s.seq, s.action, s.outcome, s.element?.name])).toEqual([
      [0, 'input_text', 'ok', 'Name'],
      [1, 'input_text', 'ok', 'Password'],
      [2, 'click_element', 'ok', 'Place order'],
      [3, 'done', 'ok', undefined],
    ]);
    expect(steps[1].args.text).toBe('<secret>password</secret>');
    // The model was told each call's outcome before it was asked again, and what the list changed.
    const second = (await recordedRequests(model(), t))[1].body.messages;
    expect(second.filter((m: any) => m.role === 'tool').map((m: any) => m.content)).toEqual([
      expect.stringContaining('Typed "Ada"'),
      expect.stringContaining('Typed'),
      expect.stringContaining('Clicked'),
    ]);
    expect(JSON.stringify(second)).not.toContain(PASSWORD);
    expect(second[second.length - 1].content).toContain(`Changed: URL is now ${site.url}/submitted?`);
    // The observation ends with the task said again.
    expect(second[second.length - 1].content).toMatch(/\nYour task: .+ order for Ada$/);

    // Replayed: the same three steps, no model call.
    const replay = await finished(await runTask(key, { replayOf: first.taskId, secrets }));
    expect(replay).toMatchObject({ status: 'task_completed', usage: { replayed_steps: 4, agent_steps: 0 } });
    expect(await modelCalls(t)).toBe(2);
    expect(site.orders).toHaveLength(orders + 1);
    expect(Object.fromEntries(site.orders[orders])).toEqual({ name: 'Ada', password: PASSWORD, plan: 'basic' });
  }, 120_000);

  it('a structured-output task is replayed with exactly one model call, for the answer', async () => {
    site.changed = false;
    const { apiKey: key } = await createUser();
    const t = token('structured');
    const outputSchema = { type: 'object', properties: { orderNumber: { type: 'string' } }, required: ['orderNumber'] };
    const answer = { tool: 'done', args: { result: { orderNumber: '{{find:Order number (\\d+)}}' } } };
    await registerScript(model(), {
      match: t,
      steps: [{ tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Grace' } }, { tool: 'click_element', args: { index: { ref: 'Place order' } } }, answer],
    });
    const first = await finished(await runTask(key, { prompt: `${t} place an order for Grace and give its number`, startingUrl: `${site.url}/order.html`, outputType: 'structured_json', outputSchema }));
    expect(first.status).toBe('task_completed');
    const firstNumber = JSON.parse(first.data.message).orderNumber;
    expect(firstNumber).toMatch(/^\d+$/);

    await registerScript(model(), { match: t, steps: [answer] });
    const replay = await finished(await runTask(key, { replayOf: first.taskId }));
    expect(replay).toMatchObject({ status: 'task_completed', usage: { replayed_steps: 2, agent_steps: 1 } });
    expect(await modelCalls(t)).toBe(4);
    const number = JSON.parse(replay.data.message).orderNumber;
    expect(Number(number)).toBeGreaterThan(Number(firstNumber));
  }, 120_000);

  it('replayOf must name one of the caller’s completed tasks', async () => {
    const { apiKey: key } = await createUser();
    const other = await createUser();
    const t = token('failing');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'cannot do it', success: false } }] });
    const failed = await finished(await runTask(key, { prompt: `${t} give up`, startingUrl: `${site.url}/order.html` }));
    expect(failed.status).toBe('failed');

    const unknown = await runTask(key, { replayOf: 'task_unknown' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, code: 'TASK_NOT_FOUND' });
    const foreign = await runTask(other.apiKey, { replayOf: failed.taskId });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ success: false, code: 'TASK_NOT_FOUND' });
    const notCompleted = await runTask(key, { replayOf: failed.taskId });
    expect(notCompleted.status).toBe(400);
    expect(notCompleted.body).toMatchObject({ success: false, code: 'INVALID_REPLAY', details: { field: 'task.replayOf', status: 'failed' } });
    const tooLong = await runTask(key, { replayOf: 'x'.repeat(101) });
    expect(tooLong.status).toBe(400);
    // Without replayOf, a prompt is still required.
    expect((await runTask(key, { prompt: ' ' })).body).toMatchObject({ code: 'INVALID_TASK_DETAILS' });
  }, 120_000);

  it('a trigger with replay: true repeats its last successful run without the model', async () => {
    site.changed = false;
    const { apiKey: key } = await createUser();
    const receiver = await startReceiver();
    try {
      const env = await api(base(), 'POST', '/environments', { key, body: { name: 'replaying trigger' } });
      const t = token('trigger');
      await registerScript(model(), {
        match: t,
        steps: [{ tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Lin' } }, { tool: 'click_element', args: { index: { ref: 'Place order' } } }, { tool: 'done', args: { message: 'Ordered' } }],
      });
      const cron = (method: string, path: string, body?: unknown) => api(base(), method, `/cron-jobs${path}`, { key, body });
      const created = await cron('POST', '', {
        name: 'daily order',
        prompt: `${t} order the basic plan for Lin`,
        startingUrl: `${site.url}/order.html`,
        environmentId: env.body.environment._id,
        scheduleType: 'every',
        scheduleInterval: '3h',
        replay: true,
        webhook: { name: 'pings', url: receiver.url('/runs'), submittedData: 'just_ping' },
      });
      expect(created.status).toBe(201);
      expect(created.body.cronJob.replay).toBe(true);
      const id = created.body.cronJob._id;
      const completedRuns = (n: number) =>
        waitFor(async () => {
          const runs = (await cron('GET', `/${id}/runs?limit=10`)).body.runs as any[];
          return runs.filter((r) => r.status === 'completed').length >= n ? runs : null;
        }, 90_000, 1500);

      const ordersBefore = site.orders.length;
      expect((await cron('POST', `/${id}/trigger`)).status).toBe(200);
      await completedRuns(1);
      expect(await modelCalls(t)).toBe(3);
      expect(site.orders.length).toBe(ordersBefore + 1);

      // The second run replays the first: the order placed again, no model call.
      expect((await cron('POST', `/${id}/trigger`)).status).toBe(200);
      const runs = await completedRuns(2);
      expect(await modelCalls(t)).toBe(3);
      expect(site.orders.length).toBe(ordersBefore + 2);
      expect(site.orders.at(-1)!.get('name')).toBe('Lin');
      const newest = runs.find((r) => r.status === 'completed')!;
      const task = (await api(base(), 'GET', `/task/${newest.sessionId}/${newest.taskId}`)).body;
      expect(task.usage).toMatchObject({ replayed_steps: 3, agent_steps: 0 });

      // Switched off, runs use the model again.
      expect((await cron('PUT', `/${id}`, { replay: false })).body.cronJob.replay).toBe(false);
      expect((await cron('PUT', `/${id}`, { replay: 'yes' })).status).toBe(400);
      await cron('DELETE', `/${id}`);
    } finally {
      await receiver.close();
    }
  }, 180_000);

  it("records a person's actions during a task, without what they type into a secret field", async () => {
    site.changed = false;
    const { apiKey: key } = await createUser();
    const t = token('manual');
    const typedByHand = 'hand-typed-Pa55word-771';
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Hal' } },
        { tool: 'request_human_input', args: { value: 'Please fill in your name and password yourself' } },
        { tool: 'click_element', args: { index: { ref: 'Place order' } } },
        { tool: 'done', args: { message: 'Ordered' } },
      ],
    });
    const session = (await api(base(), 'POST', '/start/start-session', { key, body: {} })).body;
    const send = (message: Record<string, unknown>) => api(base(), 'POST', '/start/send-message', { key, body: { sessionId: session.sessionId, message } });
    const asked = await send({ actionType: 'newTask', newState: 'start', prompt: `${t} order for Hal`, startingUrl: `${site.url}/order.html` });
    expect(asked.body).toMatchObject({ type: 'guardrail_trigger' });
    const taskId = asked.body.taskId;
    const nameBox = (await recording(key, session.sessionId, taskId)).body.steps[0].element.box;

    expect((await send({ actionType: 'interaction', action: { type: 'takeOverControl' } })).body.success).toBe(true);
    // The API's y is the page's plus 155 (the live view's header).
    expect((await send({ actionType: 'interaction', action: { type: 'CLICK', x: nameBox.x + 20, y: nameBox.y + nameBox.height / 2 + 155 } })).body.success).toBe(true);
    expect((await send({ actionType: 'interaction', action: { type: 'KEY_PRESS', key: 'End' } })).body.success).toBe(true);
    expect((await send({ actionType: 'interaction', action: { type: 'TYPE', text: ' Jordan' } })).body.success).toBe(true);
    expect((await send({ actionType: 'interaction', action: { type: 'KEY_PRESS', key: 'Tab' } })).body.success).toBe(true);
    expect((await send({ actionType: 'interaction', action: { type: 'TYPE', text: typedByHand } })).body.success).toBe(true);
    expect((await send({ actionType: 'interaction', action: { type: 'releaseControl' } })).body.success).toBe(true);
    await send({ actionType: 'guardrail', newState: 'resume', prompt: 'done' });
    const ended = await waitFor(async () => {
      const r = await api(base(), 'GET', `/task/${session.sessionId}/${taskId}`);
      return r.body.status === 'task_completed' ? r.body : null;
    }, 60_000);
    expect(ended.data.message).toBe('Ordered');
    expect(Object.fromEntries(site.orders.at(-1)!)).toMatchObject({ name: 'Hal Jordan', password: typedByHand });

    const rec = (await recording(key, session.sessionId, taskId)).body;
    expect(rec.steps.map((s: any) => [s.by, s.action])).toEqual([
      ['agent', 'input_text'],
      ['agent', 'request_human_input'],
      ['human', 'manual_click'],
      ['human', 'manual_key_press'],
      ['human', 'manual_type'],
      ['human', 'manual_key_press'],
      ['human', 'manual_type'],
      ['agent', 'click_element'],
      ['agent', 'done'],
    ]);
    expect(rec.steps[2].element).toMatchObject({ role: 'textbox', id: 'name', label: 'Name' });
    expect(rec.steps[4].args).toEqual({ text: ' Jordan' });
    expect(rec.steps[6].args).toEqual({ text: null, secret: true });
    expect(JSON.stringify(rec)).not.toContain(typedByHand);
    await send({ actionType: 'state', newState: 'terminate' });
  }, 120_000);

  it('exports a recording as a Playwright script that places the order again', async () => {
    site.changed = false;
    const { apiKey: key } = await createUser();
    const t = token('export');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Joan' } },
        { tool: 'input_text', args: { index: { ref: 'Password' }, text: '<secret>password</secret>' } },
        { tool: 'select_option', args: { index: { ref: 'Plan' }, value: 'Pro' } },
        { tool: 'click_element', args: { index: { ref: 'Place order' } } },
        { tool: 'done', args: { message: 'Ordered' } },
      ],
    });
    const done = await finished(await runTask(key, { prompt: `${t} order pro for Joan`, startingUrl: `${site.url}/order.html`, secrets: [{ match: new URL(site.url).host, fields: { password: PASSWORD } }] }));
    expect(done.status).toBe('task_completed');
    const res = await fetch(`${base()}/task/${done.sessionId}/${done.taskId}/recording?format=playwright`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/typescript/);
    expect(res.headers.get('content-disposition')).toContain(`${done.taskId}.spec.ts`);
    const script = await res.text();
    expect(script).not.toContain(PASSWORD);
    expect(script).toContain('env("SECRET_PASSWORD")');

    // Run it with Playwright's own runner, as a user would, against the same site.
    const dir = path.join(ROOT, '.data', `export-${done.taskId}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'replay.spec.ts'), script);
    fs.writeFileSync(
      path.join(dir, 'playwright.config.ts'),
      `export default { testDir: '.', outputDir: './test-results', workers: 1, timeout: 60000, reporter: 'line', use: { launchOptions: { executablePath: ${JSON.stringify(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium')}, args: ['--no-sandbox'] } } };\n`,
    );
    const runScript = (env: Record<string, string>) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/@playwright/test/cli.js'), 'test', '--config', path.join(dir, 'playwright.config.ts')], {
          cwd: dir,
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1', ...env },
        });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, out });
        });
      });
    try {
      const before = site.orders.length;
      const ran = await runScript({ SECRET_PASSWORD: PASSWORD });
      expect({ code: ran.code, out: ran.code === 0 ? '' : ran.out }).toEqual({ code: 0, out: '' });
      expect(site.orders.length).toBe(before + 1);
      expect(Object.fromEntries(site.orders.at(-1)!)).toEqual({ name: 'Joan', password: PASSWORD, plan: 'pro' });
      // Without the secret it stops, and says why.
      const missing = await runScript({});
      expect(missing.code).not.toBe(0);
      expect(missing.out).toContain('SECRET_PASSWORD');
      expect(site.orders.length).toBe(before + 1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('takes each picture after its step, at 640 px, and says so for a step that changed nothing visible', async () => {
    const { apiKey: key } = await createUser();
    const t = token('paint');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'click_element', args: { index: { ref: 'Paint' } } },
        { tool: 'wait', args: { seconds: 0.2 } },
        { tool: 'click_element', args: { index: { ref: 'Paint' } } },
        { tool: 'done', args: { message: 'painted' } },
      ],
    });
    const done = await finished(await runTask(key, { prompt: `${t} paint twice`, startingUrl: `${process.env.TEST_FIXTURES_URL}/paint.html` }));
    expect(done.status).toBe('task_completed');
    const rec = (await recording(key, done.sessionId, done.taskId)).body;
    expect(rec.steps.map((s: any) => [s.action, typeof s.pictureFileId, s.pictureSkipped])).toEqual([
      ['click_element', 'string', undefined],
      ['wait', 'undefined', 'unchanged'],
      ['click_element', 'string', undefined],
      ['done', 'undefined', 'unchanged'],
    ]);
    // Each picture shows the page after its own step: red after the first click, blue after the second.
    const colourOf = async (seq: number) => {
      const res = await fetch(`${rec.pageUrl.split('?')[0]}/pictures/${seq}?${rec.pageUrl.split('?')[1]}`);
      expect(res.status).toBe(200);
      const image = jpeg.decode(Buffer.from(await res.arrayBuffer()), { useTArray: true });
      const at = (image.width * Math.floor(image.height * 0.75) + Math.floor(image.width * 0.75)) * 4;
      return { width: image.width, rgb: [image.data[at], image.data[at + 1], image.data[at + 2]] };
    };
    const first = await colourOf(0);
    const second = await colourOf(2);
    expect(first.width).toBe(640);
    expect(first.rgb[0]).toBeGreaterThan(180);
    expect(first.rgb[2]).toBeLessThan(60);
    expect(second.rgb[2]).toBeGreaterThan(180);
    expect(second.rgb[0]).toBeLessThan(60);
  });

  it('shows a picture of the page after each step on a signed record page', async () => {
    site.changed = false;
    const { apiKey: key, userId } = await createUser();
    const t = token('pictures');
    await registerScript(model(), {
      match: t,
      steps: [
        { text: 'I will type the name.', tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Mae' } },
        { tool: 'input_text', args: { index: { ref: 'Password' }, text: '<secret>password</secret>' } },
        { tool: 'click_element', args: { index: { ref: 'Place order' } } },
        { tool: 'done', args: { message: 'Ordered' } },
      ],
    });
    const done = await finished(await runTask(key, { prompt: `${t} order for Mae`, startingUrl: `${site.url}/order.html`, secrets: [{ match: new URL(site.url).host, fields: { password: PASSWORD } }] }));
    expect(done.status).toBe('task_completed');
    const rec = (await recording(key, done.sessionId, done.taskId)).body;
    expect(rec.steps).toHaveLength(4);
    // done changed nothing on the page: the click's picture shows it, and the step says so.
    expect(rec.steps.map((s: any) => [s.action, typeof s.pictureFileId, s.pictureSkipped])).toEqual([
      ['input_text', 'string', undefined],
      ['input_text', 'string', undefined],
      ['click_element', 'string', undefined],
      ['done', 'undefined', 'unchanged'],
    ]);
    expect(rec.pageUrl).toMatch(new RegExp(`/recordings/${done.sessionId}/${done.taskId}\\?token=`));

    // The pictures are the owner's files, counted in the owner's storage and expiring like downloads; not listed with the user's files.
    const pictures = await db.collection<any>('files').find({ userId, kind: 'picture', taskId: done.taskId }).toArray();
    expect(pictures).toHaveLength(3);
    expect(pictures.every((p) => p.contentType === 'image/jpeg' && p.size > 1000 && p.expiresAt instanceof Date)).toBe(true);
    console.log(`step pictures: ${pictures.map((p) => p.size).join(', ')} bytes`);
    const listed = await api(base(), 'GET', '/files', { key });
    expect(listed.body.files.filter((f: any) => pictures.some((p) => p._id === f.fileId))).toEqual([]);

    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const opened = await page.goto(rec.pageUrl);
      expect(opened?.status()).toBe(200);
      expect(opened?.headers()['content-security-policy']).toContain("default-src 'none'");
      await page.waitForFunction(() => Array.from(document.images).length === 3 && Array.from(document.images).every((i) => i.complete && i.naturalWidth > 0), null, { timeout: 15_000 });
      expect(await page.locator('.none[data-skipped="unchanged"]').innerText()).toMatch(/looked as in the picture before/);
      const captions = await page.locator('.caption').allInnerTexts();
      expect(captions).toHaveLength(4);
      expect(captions[0]).toContain('input_text');
      expect(captions[0]).toContain('textbox "Name"');
      expect(captions[0]).toContain('by agent');
      expect(captions[0]).toContain('I will type the name.');
      expect(captions[2]).toContain('click_element');
      expect(captions[2]).toContain('button "Place order"');
      expect(captions[3]).toContain('done');
      const html = await page.content();
      expect(html).not.toContain(PASSWORD);
      expect(captions.join('\n')).not.toContain(PASSWORD);
      // Captured at the width the page shows them (640 px for a 1024 px viewport), not larger.
      const width = await page.evaluate(() => document.images[0].naturalWidth);
      expect(width).toBe(640);

      // The picture after the password was typed shows a black box where the field is, and the
      // name field beside it as it was (white, but for the name).
      const form = await browser.newPage({ viewport: { width: 1024, height: 600 } });
      await form.goto(`${site.url}/order.html`);
      const boxOf = async (selector: string) => (await form.locator(selector).boundingBox())!;
      const [passwordBox, nameBox] = [await boxOf('#password'), await boxOf('#name')];
      const res = await fetch(`${rec.pageUrl.split('?')[0]}/pictures/1?${rec.pageUrl.split('?')[1]}`);
      const image = jpeg.decode(Buffer.from(await res.arrayBuffer()), { useTArray: true });
      const scale = image.width / 1024;
      const brightness = (x: number, y: number) => {
        const at = (image.width * Math.round(y * scale) + Math.round(x * scale)) * 4;
        return (image.data[at] + image.data[at + 1] + image.data[at + 2]) / 3;
      };
      const inside = (b: { x: number; y: number; width: number; height: number }) => [0.15, 0.5, 0.85].map((f) => brightness(b.x + b.width * f, b.y + b.height / 2));
      expect(inside(passwordBox).every((v) => v < 50)).toBe(true);
      expect(brightness(nameBox.x + nameBox.width * 0.85, nameBox.y + nameBox.height / 2)).toBeGreaterThan(200);
    } finally {
      await browser.close();
    }

    // A wrong token, or another task's token, finds nothing.
    const other = await finished(await runTask(key, { replayOf: done.taskId, secrets: [{ match: new URL(site.url).host, fields: { password: PASSWORD } }] }));
    const otherToken = new URL((await recording(key, other.sessionId, other.taskId)).body.pageUrl).searchParams.get('token');
    for (const url of [rec.pageUrl.replace(/token=.*/, 'token=wrong'), rec.pageUrl.replace(/token=.*/, `token=${otherToken}`), `${rec.pageUrl.split('?')[0]}/pictures/0?token=${otherToken}`]) {
      expect((await fetch(url)).status).toBe(404);
    }
    const picture = await fetch(`${rec.pageUrl.split('?')[0]}/pictures/0?${rec.pageUrl.split('?')[1]}`);
    expect(picture.status).toBe(200);
    expect(picture.headers.get('content-type')).toBe('image/jpeg');
    expect((await fetch(`${rec.pageUrl.split('?')[0]}/pictures/9?${rec.pageUrl.split('?')[1]}`)).status).toBe(404);

    // Deleting the recording: another user's key finds nothing; the owner's removes the steps
    // and pictures, and the page and pictures answer 404 to the token signed before.
    const { apiKey: stranger } = await createUser();
    const recordingPath = `/task/${done.sessionId}/${done.taskId}/recording`;
    expect((await api(base(), 'DELETE', recordingPath, { key: stranger })).status).toBe(404);
    expect((await fetch(picture.url)).status).toBe(200);
    const deleted = await api(base(), 'DELETE', recordingPath, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, sessionId: done.sessionId, taskId: done.taskId, deletedSteps: 4, deletedPictures: 3 });
    expect((await fetch(rec.pageUrl)).status).toBe(404);
    expect((await fetch(picture.url)).status).toBe(404);
    expect(await db.collection<any>('files').countDocuments({ userId, kind: 'picture', taskId: done.taskId })).toBe(0);
    expect((await recording(key, done.sessionId, done.taskId)).body.steps).toEqual([]);
  }, 180_000);
});
