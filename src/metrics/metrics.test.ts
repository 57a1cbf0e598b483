import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiMetrics, errorCode } from './api-metrics';
import { metricsAllowed, metricsRoute, renderAll } from './http';
import { WorkerMetrics } from './worker-metrics';
import { temporalMetricsAddress } from './temporal';

/** The value of one sample line of the text format, 0 when absent. */
function sample(text: string, line: string): number {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

describe('worker metrics', () => {
  it('counts a step: its duration by outcome, tokens and model cost apart from proxy cost', async () => {
    const m = new WorkerMetrics();
    m.watch({ size: 2, capacity: 10 }, 'model-x');
    m.stepStarted().ended({ kind: 'continue', usage: { inputTokens: 1200, outputTokens: 80 }, cost: 0.5, proxy: { bytes: 10, cost: 0.1 } });
    m.stepStarted().failed(true);
    const text = await m.registry.metrics();
    expect(sample(text, 'browser_agent_step_duration_seconds_count{outcome="continue"}')).toBe(1);
    expect(sample(text, 'browser_agent_step_duration_seconds_count{outcome="cancelled"}')).toBe(1);
    expect(sample(text, 'browser_agent_model_tokens_total{model="model-x",kind="input"}')).toBe(1200);
    expect(sample(text, 'browser_agent_model_tokens_total{model="model-x",kind="output"}')).toBe(80);
    expect(sample(text, 'browser_agent_model_cost_usd_total{model="model-x"}')).toBeCloseTo(0.4);
    expect(sample(text, 'browser_agent_proxy_cost_usd_total')).toBeCloseTo(0.1);
    expect(sample(text, 'browser_agent_browser_sessions')).toBe(2);
    expect(sample(text, 'browser_agent_browser_capacity')).toBe(10);
  });

  it("splits a step's time into observe, model, act and the rest", async () => {
    const m = new WorkerMetrics();
    m.stepStarted().ended({ kind: 'continue', usage: { inputTokens: 0, outputTokens: 0 }, cost: 0, timings: { observeMs: 30, modelMs: 900, actMs: 50 } });
    m.stepStarted().ended({ kind: 'continue', usage: { inputTokens: 0, outputTokens: 0 }, cost: 0 });
    const text = await m.registry.metrics();
    expect(sample(text, 'browser_agent_step_phase_seconds_sum{phase="observe"}')).toBeCloseTo(0.03);
    expect(sample(text, 'browser_agent_step_phase_seconds_sum{phase="model"}')).toBeCloseTo(0.9);
    expect(sample(text, 'browser_agent_step_phase_seconds_sum{phase="act"}')).toBeCloseTo(0.05);
    // a step without timings (a replayed or resumed one) is not split
    expect(sample(text, 'browser_agent_step_phase_seconds_count{phase="rest"}')).toBe(1);
    expect(sample(text, 'browser_agent_step_duration_seconds_count{outcome="continue"}')).toBe(2);
  });

  it('counts a task once, and a failed one by its code', async () => {
    const m = new WorkerMetrics();
    m.taskEnded({ status: 'failed', code: 'MAX_STEPS_REACHED' }, true);
    m.taskEnded({ status: 'failed', code: 'MAX_STEPS_REACHED' }, false);
    m.taskEnded({ status: 'task_completed' }, true);
    m.delivery('webhook', 'final');
    const text = await m.registry.metrics();
    expect(sample(text, 'browser_agent_tasks_total{outcome="failed"}')).toBe(1);
    expect(sample(text, 'browser_agent_tasks_total{outcome="task_completed"}')).toBe(1);
    expect(sample(text, 'browser_agent_task_errors_total{code="MAX_STEPS_REACHED"}')).toBe(1);
    expect(sample(text, 'browser_agent_deliveries_total{channel="webhook",outcome="refused"}')).toBe(1);
  });

  it('puts the Temporal SDK exporter on the loopback, next to METRICS_PORT unless given', () => {
    expect(temporalMetricsAddress({ METRICS_PORT: undefined, TEMPORAL_METRICS_PORT: 9000 })).toBeUndefined();
    expect(temporalMetricsAddress({ METRICS_PORT: 9464, TEMPORAL_METRICS_PORT: undefined })).toBe('127.0.0.1:9465');
    expect(temporalMetricsAddress({ METRICS_PORT: 9464, TEMPORAL_METRICS_PORT: 9999 })).toBe('127.0.0.1:9999');
  });
});

describe('API metrics', () => {
  it('reads the code of REST and OpenAI error bodies, nothing else', () => {
    expect(errorCode({ success: false, code: 'RATE_LIMIT_EXCEEDED' })).toBe('RATE_LIMIT_EXCEEDED');
    expect(errorCode({ error: { message: 'x', code: 'invalid_api_key' } })).toBe('invalid_api_key');
    expect(errorCode({ code: 'user typed <this>' })).toBeNull();
    expect(errorCode('text')).toBeNull();
  });

  it('asks for the bearer token only when one is set', () => {
    expect(metricsAllowed(undefined, undefined)).toBe(true);
    expect(metricsAllowed(undefined, 'a-token-of-16-chars')).toBe(false);
    expect(metricsAllowed('Bearer wrong', 'a-token-of-16-chars')).toBe(false);
    expect(metricsAllowed('Bearer a-token-of-16-chars', 'a-token-of-16-chars')).toBe(true);
  });

  it('counts answers by status and error codes, served behind the token', async () => {
    const m = new ApiMetrics();
    m.watch({ liveSessions: async () => 3, sockets: () => 1 });
    const app = express();
    app.use(m.middleware());
    app.get('/metrics', metricsRoute(m.registry, 'a-token-of-16-chars'));
    app.get('/bad', (_req, res) => void res.status(400).json({ success: false, code: 'INVALID_PARAMS' }));
    const server = http.createServer(app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await fetch(`${base}/bad`);
      const refused = await fetch(`${base}/metrics`);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ success: false, code: 'UNAUTHORIZED' });
      const res = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer a-token-of-16-chars' } });
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await res.text();
      expect(sample(text, 'browser_agent_http_errors_total{code="INVALID_PARAMS"}')).toBe(1);
      expect(sample(text, 'browser_agent_http_errors_total{code="UNAUTHORIZED"}')).toBe(1);
      expect(sample(text, 'browser_agent_http_requests_total{method="GET",status="400"}')).toBe(1);
      expect(sample(text, 'browser_agent_live_sessions')).toBe(3);
      expect(sample(text, 'browser_agent_socket_connections')).toBe(1);
    } finally {
      server.close();
    }
  });

  it('serves a worker of the same process with the API, each family once', async () => {
    const apiSide = new ApiMetrics();
    const workerSide = new WorkerMetrics();
    workerSide.tasks.inc({ outcome: 'task_completed' });
    workerSide.steps.observe({ outcome: 'done' }, 0.5);
    const text = await renderAll([apiSide.registry, workerSide.registry]);
    expect(sample(text, 'browser_agent_tasks_total{outcome="task_completed"}')).toBe(1);
    expect(sample(text, 'browser_agent_step_duration_seconds_count{outcome="done"}')).toBe(1);
    expect(text).toContain('browser_agent_http_requests_total');
    // Both registries collect the process's default metrics: each family is given once.
    const helps = text.split('\n').filter((line) => line.startsWith('# HELP '));
    expect(new Set(helps).size).toBe(helps.length);
    expect(helps.filter((line) => line.startsWith('# HELP browser_agent_process_cpu_seconds_total '))).toHaveLength(1);
  });
});
