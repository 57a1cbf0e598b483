/**
 * A recorded task against its replays, through the real stack: the time of a step the agent
 * chose (instant scripted model: observation, decision plumbing, action, Temporal round trip)
 * against a replayed step (finding the element again, the action, the round trip), and the
 * cost of the original task against a replay's. Writes JSON to BENCH_REPLAY_OUT.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { api, waitFor } from '../test/support/http';
import { recordedRequests, registerScript, startScriptedModel } from '../test/support/scripted-model';
import { createUser, ROOT, startService } from '../test/support/service';

const REPLAYS = Number(process.env.BENCH_REPLAYS ?? 8);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10 : null;
};
const summary = (xs: number[]) => ({ p50: pct(xs, 50), p95: pct(xs, 95), n: xs.length });

const PAGE = `<!doctype html><title>Order</title><h1>Order form</h1>
  <form action="/submitted" method="get">
    <p><label for="name">Name</label> <input id="name" name="name"></p>
    <p><label for="email">Email</label> <input id="email" name="email" type="email"></p>
    <p><label for="plan">Plan</label> <select id="plan" name="plan"><option>Basic</option><option>Pro</option></select></p>
    <p><label><input type="checkbox" name="terms"> I accept the terms</label></p>
    <p><button>Place order</button></p>
  </form>`;

it('replayed steps against agent steps', async () => {
  const model = await startScriptedModel();
  let orders = 0;
  const site = http.createServer((req, res) => {
    if (req.url?.startsWith('/submitted')) {
      orders += 1;
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Thanks</title><p>Order ${orders} placed</p>`);
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  process.env.TEST_LLM_BASE_URL = model.url;
  const service = await startService({
    LOG_LEVEL: 'warn',
    TEMPORAL_TASK_QUEUE: `bench-replay-${Date.now()}`,
    INLINE_WAIT_MS: '120000',
    RATE_LIMIT_PER_MINUTE: '1000',
    PRIVATE_NETWORK_ALLOWLIST: `127.0.0.1:${(site.address() as AddressInfo).port}`,
  });
  try {
    const key = (await createUser({ balance: 100 })).apiKey;
    const token = `[bench-replay-${Date.now()}]`;
    await registerScript(model.url, {
      match: token,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Ada Lovelace' } },
        { tool: 'input_text', args: { index: { ref: 'Email' }, text: 'ada@example.com' } },
        { tool: 'select_option', args: { index: { ref: 'Plan' }, value: 'Pro' } },
        { tool: 'click_element', args: { index: { ref: 'I accept the terms' } } },
        { tool: 'click_element', args: { index: { ref: 'Place order' } } },
        { tool: 'done', args: { message: 'Order placed' } },
      ],
    });
    const run = async (task: Record<string, unknown>) => {
      const r = await api(service.baseUrl, 'POST', '/start/run-task', { key, body: { task } });
      if (r.status !== 200) throw new Error(`run-task: ${r.status} ${r.text}`);
      const done = r.body.status === 'task_completed' ? r.body : await waitFor(async () => ((await api(service.baseUrl, 'GET', `/task/${r.body.sessionId}/${r.body.taskId}`)).body.status === 'task_completed' ? (await api(service.baseUrl, 'GET', `/task/${r.body.sessionId}/${r.body.taskId}`)).body : null), 120_000);
      const rec = (await api(service.baseUrl, 'GET', `/task/${done.sessionId}/${done.taskId}/recording`, { key })).body;
      const at = rec.steps.map((s: { at: string }) => Date.parse(s.at));
      // A step's time: from the previous step's end to its own (the first step's start is not recorded).
      const stepMs = at.slice(1).map((t: number, i: number) => t - at[i]);
      return { done, stepMs };
    };
    const original = await run({ prompt: `${token} order the pro plan`, startingUrl: `${siteUrl}/order` });
    const modelCallsAfterOriginal = (await recordedRequests(model.url, token)).length;
    const replays = [];
    for (let i = 0; i < REPLAYS; i++) replays.push(await run({ replayOf: original.done.taskId }));
    const modelCallsOfReplays = (await recordedRequests(model.url, token)).length - modelCallsAfterOriginal;
    if (orders !== REPLAYS + 1) throw new Error(`expected ${REPLAYS + 1} orders, the site saw ${orders}`);
    const out = {
      benchmark: 'replay',
      task: 'a 6-step order form (5 actions and done)',
      agentStepMs: summary(original.stepMs),
      replayedStepMs: summary(replays.flatMap((r) => r.stepMs)),
      taskSeconds: { original: original.done.usage.completion_time, replayP50: pct(replays.map((r) => r.done.usage.completion_time), 50) },
      cost: {
        original: { usd: original.done.usage.cost, tokens: original.done.usage.total_tokens, modelCalls: modelCallsAfterOriginal },
        replay: { usd: pct(replays.map((r) => r.done.usage.cost), 50), tokens: pct(replays.map((r) => r.done.usage.total_tokens), 50), modelCalls: modelCallsOfReplays / REPLAYS },
      },
      note: 'the scripted model answers at once: with a real model each agent step adds its latency (typically 1-5 s) and a replayed step does not',
    };
    fs.writeFileSync(process.env.BENCH_REPLAY_OUT ?? path.join(ROOT, '.data/bench-replay.json'), JSON.stringify(out, null, 2));
  } finally {
    await service.stop();
    await new Promise((r) => site.close(r));
    await model.close();
  }
}, 600_000);
