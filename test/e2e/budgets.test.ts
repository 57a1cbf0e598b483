/**
 * Dollar budgets, enforced outside the model: a task's `maxCost`, a user's daily spending
 * limit (admin CLI), `metadata.max_cost` of chat completions and a trigger's `maxCost`. The
 * test stack prices the model at 1 USD per million input tokens and 2 per million output
 * tokens; each scripted reply reports 1,000 prompt and 50 completion tokens (0.0011 USD).
 */
import { api, waitFor } from '../support/http';
import { registerScript } from '../support/scripted-model';
import { admin, createUser, temporalClient } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
const CALL_COST = 0.0011;
const usage = { prompt_tokens: 1000, completion_tokens: 50 };

async function modelRequests(match: string): Promise<any[]> {
  const res = await fetch(`${model().replace(/\/v1$/, '')}/__requests?match=${encodeURIComponent(match)}`);
  return (await res.json()) as any[];
}

/** A script that types a new name at every step (the page changes, so no repetition ends it). */
const typingSteps = (n: number) => Array.from({ length: n }, (_, i) => ({ tool: 'input_text', args: { index: { ref: 'Name' }, text: `Ada ${i}` }, usage, text: `Typing name ${i}.` }));

const runTask = (key: string, task: Record<string, unknown>) => api(base(), 'POST', '/start/run-task', { key, body: { task } });
/** Opens the form page once in a task of its own, so tasks started together next do not meet a cold browser. */
async function warmUp(key: string): Promise<void> {
  const t = token('warm');
  await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'warm' }, usage }] });
  await settled(await runTask(key, { prompt: `${t} warm up`, startingUrl: `${fixtures()}/form.html` }));
}

/** A run-task's outcome: its answer, or (not ended within the inline wait) the task polled until it ends. */
async function settled(res: { body: any }): Promise<any> {
  if (res.body.status === 'failed' || res.body.type === 'task_completed') return res.body;
  return waitFor(async () => {
    const r = await api(base(), 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`);
    return ['task_completed', 'failed', 'stopped'].includes(r.body.type ?? r.body.status) ? r.body : null;
  }, 120_000);
}

describe('dollar budgets', () => {
  it('stops a task before the model call that would pass its maxCost, with the usage so far and the partial message; nothing is charged beyond it', async () => {
    const { userId, apiKey: key } = await createUser({ balance: 10 });
    const t = token('maxcost');
    await registerScript(model(), { match: t, steps: typingSteps(12) });
    const maxCost = 0.005;
    const res = await runTask(key, { prompt: `${t} keep typing`, startingUrl: `${fixtures()}/form.html`, maxCost });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, status: 'failed', code: 'TASK_BUDGET_EXCEEDED', details: { budget: 'maxCost', limit: maxCost } });
    const { details, usage: used } = res.body;
    // The refused call would have passed what was left; the calls made stayed within it.
    expect(details.estimatedCallCost).toBeGreaterThan(details.left);
    expect(used.cost).toBeLessThanOrEqual(maxCost);
    expect(details.left).toBeCloseTo(maxCost - used.cost, 6);
    const calls = (await modelRequests(t)).length;
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(used.prompt_tokens).toBe(calls * 1000);
    expect(used.cost).toBeCloseTo(calls * CALL_COST, 6);
    // What the agent said last comes back with the failure.
    expect(details.partialMessage).toBe(`Typing name ${calls - 1}.`);
    // Charged what it used, once.
    const charged = await waitFor(async () => {
      const u = (await admin(['users', 'list'])).json.users.find((x: any) => x.userId === userId);
      return u.balance < 10 ? u : null;
    }, 10_000);
    expect(charged.balance).toBeCloseTo(10 - used.cost, 6);
    // The output a call may produce is capped by what the budget leaves after its prompt.
    const [first] = await modelRequests(t);
    expect(first.body.max_tokens).toBeLessThan(4096);
  });

  it('holds every task of a user to the daily spending limit set with the admin CLI, across tasks; lifted, tasks run again', async () => {
    const { userId, apiKey: key } = await createUser({ balance: 10 });
    const set = await admin(['users', 'set-daily-limit', '--user', userId, '--usd', '0.004']);
    expect(set.code).toBe(0);
    expect(set.json).toMatchObject({ userId, dailyLimit: 0.004, spentToday: 0 });
    expect((await admin(['users', 'set-daily-limit', '--user', userId, '--usd', 'lots'])).code).toBe(2);

    const a = token('daily-a');
    await registerScript(model(), { match: a, steps: typingSteps(12) });
    const first = await runTask(key, { prompt: `${a} keep typing`, startingUrl: `${fixtures()}/form.html` });
    expect(first.body).toMatchObject({ status: 'failed', code: 'TASK_BUDGET_EXCEEDED', details: { budget: 'dailyLimit', limit: 0.004 } });
    expect(first.body.usage.cost).toBeGreaterThan(0);
    expect(first.body.usage.cost).toBeLessThanOrEqual(0.004);
    const spent = await waitFor(async () => {
      const u = (await admin(['users', 'list'])).json.users.find((x: any) => x.userId === userId);
      return u.spentToday > 0 ? u : null;
    }, 10_000);
    expect(spent.spentToday).toBeCloseTo(first.body.usage.cost, 6);

    // The next task meets what is left today: it ends before any call it cannot pay for.
    const b = token('daily-b');
    await registerScript(model(), { match: b, steps: typingSteps(12) });
    const second = await runTask(key, { prompt: `${b} keep typing`, startingUrl: `${fixtures()}/form.html` });
    expect(second.body).toMatchObject({ status: 'failed', code: 'TASK_BUDGET_EXCEEDED', details: { budget: 'dailyLimit' } });
    expect(second.body.details.left).toBeCloseTo(0.004 - first.body.usage.cost - second.body.usage.cost, 6);
    expect(first.body.usage.cost + second.body.usage.cost).toBeLessThanOrEqual(0.004);

    const lifted = await admin(['users', 'set-daily-limit', '--user', userId, '--usd', 'off']);
    expect(lifted.json).toMatchObject({ dailyLimit: null });
    const c = token('daily-c');
    await registerScript(model(), { match: c, steps: [...typingSteps(3), { tool: 'done', args: { message: 'typed' }, usage }] });
    const third = await runTask(key, { prompt: `${c} type three names`, startingUrl: `${fixtures()}/form.html` });
    expect(third.body).toMatchObject({ status: 'task_completed', data: { message: 'typed' } });
  });

  it('holds tasks started at once to the daily limit: together they pass it by at most one model call each', async () => {
    const { userId, apiKey: key } = await createUser({ balance: 10 });
    await warmUp((await createUser({ balance: 10 })).apiKey);
    const limit = 10 * CALL_COST;
    expect((await admin(['users', 'set-daily-limit', '--user', userId, '--usd', String(limit)])).code).toBe(0);
    const tasks = Array.from({ length: 5 }, (_, i) => token(`together-${i}`));
    for (const t of tasks) await registerScript(model(), { match: t, steps: typingSteps(15) });
    const results = await Promise.all(tasks.map(async (t) => settled(await runTask(key, { prompt: `${t} keep typing`, startingUrl: `${fixtures()}/form.html` }))));
    const spent = results.reduce((sum, r) => sum + r.usage.cost, 0);
    console.log(`daily limit ${limit}: ${results.length} tasks at once spent ${spent} (${results.map((r) => r.usage.cost).join(', ')})`);
    const calls = (await Promise.all(tasks.map((t) => modelRequests(t)))).reduce((n, reqs) => n + reqs.length, 0);
    expect(spent).toBeCloseTo(calls * CALL_COST, 6);
    expect(spent).toBeLessThanOrEqual(limit + tasks.length * CALL_COST + 1e-9);
    for (const r of results) expect(r).toMatchObject({ status: 'failed', code: 'TASK_BUDGET_EXCEEDED', details: { budget: 'dailyLimit' } });
    const user = (await admin(['users', 'list'])).json.users.find((x: any) => x.userId === userId);
    expect(user.spentToday).toBeCloseTo(spent, 6);
  });

  it('holds tasks started at once to the balance: together they pass it by at most one model call each', async () => {
    const balance = 0.012;
    const { userId, apiKey: key } = await createUser({ balance });
    const tasks = Array.from({ length: 5 }, (_, i) => token(`funds-${i}`));
    await warmUp((await createUser({ balance: 10 })).apiKey);
    for (const t of tasks) await registerScript(model(), { match: t, steps: typingSteps(25) });
    const results = await Promise.all(tasks.map(async (t) => settled(await runTask(key, { prompt: `${t} keep typing`, startingUrl: `${fixtures()}/form.html` }))));
    const spent = results.reduce((sum, r) => sum + r.usage.cost, 0);
    console.log(`balance ${balance}: ${results.length} tasks at once spent ${spent} (${results.map((r) => r.usage.cost).join(', ')})`);
    expect(spent).toBeLessThanOrEqual(balance + tasks.length * CALL_COST + 1e-9);
    for (const r of results) expect(r).toMatchObject({ status: 'failed', code: 'TASK_BUDGET_EXCEEDED', details: { budget: 'balance' } });
    const user = (await admin(['users', 'list'])).json.users.find((x: any) => x.userId === userId);
    expect(user.balance).toBeCloseTo(balance - spent, 6);
    expect(user.balance).toBeGreaterThanOrEqual(-tasks.length * CALL_COST - 1e-9);
  });

  it('refuses a maxCost that is not a positive number of USD (run-task, chat completions metadata)', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    for (const bad of [0, -1, 10_001, '1']) {
      const res = await runTask(key, { prompt: 'p', maxCost: bad });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, code: 'INVALID_PARAMETER', details: { parameter: 'task.maxCost' } });
    }
    const chat = await api(base(), 'POST', '/v1/chat/completions', { key, body: { model: 'service-browser-1', messages: [{ role: 'user', content: 'p' }], metadata: { max_cost: 'a lot' } } });
    expect(chat.status).toBe(400);
    expect(chat.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_parameter', message: expect.stringContaining('metadata.max_cost') });
  });

  it('ends a chat completion at metadata.max_cost (an OpenAI metadata string)', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const t = token('chat-cost');
    await registerScript(model(), { match: t, steps: typingSteps(12) });
    const res = await api(base(), 'POST', '/v1/chat/completions', { key, body: { model: 'service-browser-1', messages: [{ role: 'user', content: `${t} keep typing on ${fixtures()}/form.html` }], metadata: { max_cost: '0.002' } } });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ type: 'task_error', code: 'task_budget_exceeded' });
    expect((await modelRequests(t)).length).toBeLessThanOrEqual(1);
  });

  it('pauses a trigger whose runs end on their budget three times in a row (its maxConsecutiveFailures set higher)', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const env = await api(base(), 'POST', '/environments', { key, body: { name: `budget ${Date.now()}` } });
    const environmentId = env.body.environment._id;
    const t = token('trig-cost');
    await registerScript(model(), { match: t, steps: typingSteps(12) });
    const created = await api(base(), 'POST', '/cron-jobs', {
      key,
      body: { name: 'too dear', prompt: `${t} keep typing`, startingUrl: `${fixtures()}/form.html`, environmentId, scheduleType: 'every', scheduleInterval: '1d', maxConsecutiveFailures: 10, maxCost: 0.000001, webhook: { name: 'runs', url: `${fixtures()}/webhook-sink`, submittedData: 'just_ping' } },
    });
    expect([created.status, created.body.error]).toEqual([201, undefined]);
    const job = created.body.cronJob;
    expect(job).toMatchObject({ maxCost: 0.000001 });
    for (let i = 1; i <= 3; i++) {
      expect((await api(base(), 'POST', `/cron-jobs/${job._id}/trigger`, { key })).status).toBe(200);
      await waitFor(async () => {
        const runs = (await api(base(), 'GET', `/cron-jobs/${job._id}/runs?limit=10`, { key })).body.runs as any[];
        return runs.length === i && runs.every((r) => r.status === 'failed') ? runs : null;
      }, 60_000, 1500);
    }
    const runs = (await api(base(), 'GET', `/cron-jobs/${job._id}/runs?limit=10`, { key })).body.runs as any[];
    for (const r of runs) expect(r).toMatchObject({ status: 'failed', code: 'TASK_BUDGET_EXCEEDED' });
    expect(await modelRequests(t)).toHaveLength(0);
    const paused = await waitFor(async () => {
      const j = (await api(base(), 'GET', `/cron-jobs/${job._id}`, { key })).body.cronJob;
      return j.status === 'paused' ? j : null;
    }, 10_000, 1000);
    expect(paused).toMatchObject({ status: 'paused', pausedBy: 'failures', consecutiveFailures: 3 });
    const { client, close } = await temporalClient();
    try {
      const desc = await client.schedule.getHandle(`trigger-${job._id}`).describe();
      expect(desc.state).toMatchObject({ paused: true, note: 'Paused after 3 runs in a row ended by their budget (TASK_BUDGET_EXCEEDED)' });
    } finally {
      await close();
    }
    await api(base(), 'DELETE', `/cron-jobs/${job._id}`, { key });
  });
});
