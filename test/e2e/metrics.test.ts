/**
 * GET /metrics as Prometheus reads it, on the API and on the shared service's worker
 * (METRICS_PORT): after a task ran, the counters an operator watches have moved.
 */
import { api, waitFor } from '../support/http';
import { registerScript } from '../support/scripted-model';
import { createUser } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const workerMetricsUrl = () => process.env.TEST_WORKER_METRICS_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = () => `[metrics___-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

/** Samples of the text format by their series (`name{labels}`); metadata lines skipped. */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

async function scrape(url: string): Promise<{ text: string; samples: Map<string, number> }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: parse(text) };
}

describe('metrics', () => {
  it('counts a task on the worker (outcome, step, tokens) and the requests on the API, naming no user', async () => {
    const { userId, apiKey: key } = await createUser();
    const [apiBefore, workerBefore] = [(await scrape(`${base()}/metrics`)).samples, (await scrape(workerMetricsUrl())).samples];
    const t = token();
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'counted' }, usage: { prompt_tokens: 1000, completion_tokens: 100 } }] });
    const run = await api(base(), 'POST', '/start/run-task', { key, body: { task: { prompt: `${t} finish` } } });
    expect(run.body).toMatchObject({ type: 'task_completed', data: { message: 'counted' } });
    const refused = await api(base(), 'POST', '/start/run-task', { key, body: {} });
    expect(refused.status).toBe(400);

    const moved = (before: Map<string, number>, after: Map<string, number>, series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);
    const worker = await waitFor(async () => {
      const now = await scrape(workerMetricsUrl());
      return moved(workerBefore, now.samples, 'browser_agent_tasks_total{outcome="task_completed"}') >= 1 ? now : null;
    }, 10_000);
    expect(moved(workerBefore, worker.samples, 'browser_agent_step_duration_seconds_count{outcome="done"}')).toBeGreaterThanOrEqual(1);
    expect(moved(workerBefore, worker.samples, 'browser_agent_model_tokens_total{model="scripted-model",kind="input"}')).toBeGreaterThanOrEqual(1000);
    expect(moved(workerBefore, worker.samples, 'browser_agent_model_tokens_total{model="scripted-model",kind="output"}')).toBeGreaterThanOrEqual(100);
    // LLM_PRICES of the test service: 1 and 2 USD per million tokens.
    expect(moved(workerBefore, worker.samples, 'browser_agent_model_cost_usd_total{model="scripted-model"}')).toBeGreaterThanOrEqual(0.0012 - 1e-9);
    expect(worker.samples.get('browser_agent_browser_capacity')).toBe(30);
    expect(worker.samples.get('browser_agent_browser_memory_bytes')).toBeGreaterThan(0);
    // The Temporal SDK's own metrics, exported by its runtime, come with the worker's.
    expect(worker.text).toMatch(/^temporal_\w+/m);

    const apiAfter = await scrape(`${base()}/metrics`);
    // The test service runs ROLE=all: its one /metrics carries the worker's figures too.
    expect(moved(apiBefore, apiAfter.samples, 'browser_agent_tasks_total{outcome="task_completed"}')).toBeGreaterThanOrEqual(1);
    expect(moved(apiBefore, apiAfter.samples, 'browser_agent_step_duration_seconds_count{outcome="done"}')).toBeGreaterThanOrEqual(1);
    expect(moved(apiBefore, apiAfter.samples, 'browser_agent_model_tokens_total{model="scripted-model",kind="input"}')).toBeGreaterThanOrEqual(1000);
    expect(apiAfter.text).toMatch(/^temporal_\w+/m);
    expect(moved(apiBefore, apiAfter.samples, 'browser_agent_http_requests_total{method="POST",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(moved(apiBefore, apiAfter.samples, 'browser_agent_http_errors_total{code="MISSING_REQUIRED_FIELD"}')).toBeGreaterThanOrEqual(1);
    expect(apiAfter.samples.has('browser_agent_live_sessions')).toBe(true);
    // Aggregate figures only: nothing of the user, their key or their task.
    for (const text of [apiAfter.text, worker.text]) {
      for (const secret of [userId, key, t, run.body.sessionId, run.body.taskId]) expect(text).not.toContain(secret);
    }
  });
});
