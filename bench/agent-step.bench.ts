/**
 * Per-step time of the agent loop spent outside the model, on the 1,600-element page with
 * an instant scripted model, through the real stack (API → Temporal → worker → Chromium).
 * Writes JSON to BENCH_OUT (scripts/bench.sh prints it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { EncryptionCodec } from '../src/temporal/codec';
import { startFixtureServer } from '../test/support/fixtures-server';
import { api } from '../test/support/http';
import { recordedRequests, registerScript, startScriptedModel } from '../test/support/scripted-model';
import { createUser, ROOT, startService } from '../test/support/service';

const STEPS = Number(process.env.BENCH_STEPS ?? 40);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 20);
const COMPLETION_SAMPLES = Number(process.env.BENCH_COMPLETION_SAMPLES ?? 15);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10 : null;
};
const summary = (xs: number[]) => ({ p50: pct(xs, 50), p95: pct(xs, 95), n: xs.length });

/** admission (slot and record), workflow start, and the wait until the worker holds the browser, from the service's log. */
function createBreakdown(log: string): Record<string, ReturnType<typeof summary>> {
  const lines = log.split('\n').filter((l) => l.includes('"msg":"session started"')).map((l) => JSON.parse(l) as Record<string, number>);
  return Object.fromEntries(['admitMs', 'startMs', 'readyMs'].map((k) => [k, summary(lines.map((l) => l[k]).filter((v) => typeof v === 'number'))]));
}

it('agent step and session benchmarks', async () => {
  const model = await startScriptedModel();
  const fixtures = await startFixtureServer(path.join(ROOT, 'test/fixtures'));
  process.env.TEST_FIXTURES_URL = fixtures.url;
  process.env.TEST_LLM_BASE_URL = model.url;
  // info: the service's "session started" lines say where a session start's time went
  const service = await startService({ LOG_LEVEL: 'info', TEMPORAL_TASK_QUEUE: `bench-${Date.now()}`, INLINE_WAIT_MS: '120000', RATE_LIMIT_PER_MINUTE: '1000' });
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  try {
    // session create latency (a new user every 4 sessions: the limit is 10 requests a minute per user)
    const creates: number[] = [];
    let key = '';
    for (let i = 0; i < SESSIONS; i++) {
      if (i % 4 === 0) key = (await createUser({ balance: 100 })).apiKey;
      const t0 = performance.now();
      const r = await api(service.baseUrl, 'POST', '/start/start-session', { key, body: {} });
      creates.push(performance.now() - t0);
      if (r.status !== 200) throw new Error(`start-session: ${r.status} ${r.text}`);
      await api(service.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId: r.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
    }

    key = (await createUser({ balance: 100 })).apiKey;
    const token = `[bench-${Date.now()}]`;
    const steps = Array.from({ length: STEPS }, (_, i) => ({ tool: 'scroll', args: { direction: i % 2 ? 'up' : 'down' } }));
    await registerScript(model.url, { match: token, steps: [...steps, { tool: 'done', args: { message: 'bench done' } }] });
    const s = (await api(service.baseUrl, 'POST', '/start/start-session', { key, body: {} })).body;
    const t0 = performance.now();
    const res = await api(service.baseUrl, 'POST', '/start/send-message', {
      key,
      body: { sessionId: s.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${token} scroll around`, startingUrl: `${fixtures.url}/big.html`, maxInputTokens: 100000 } },
    });
    const answeredAt = Date.now();
    const total = performance.now() - t0;
    if (res.body.type !== 'task_completed') throw new Error(`task did not complete: ${res.text}`);
    // completedAt is stamped by the workflow when the agent's `done` lands; the answer follows the stored record
    const completionToAnswer = [answeredAt - new Date((await api(service.baseUrl, 'GET', `/task/${s.sessionId}/${res.body.taskId}`)).body.completedAt).getTime()];
    // more samples: short follow-up tasks on the same session, each one `done` step
    const quick = `[bench-quick-${Date.now()}]`;
    await registerScript(model.url, { match: quick, steps: [{ tool: 'done', args: { message: 'quick' } }] });
    for (let i = 0; i < COMPLETION_SAMPLES; i++) {
      const r = await api(service.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId: s.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${quick} answer ${i}` } } });
      const at = Date.now();
      if (r.body.type !== 'task_completed') throw new Error(`quick task did not complete: ${r.text}`);
      completionToAnswer.push(at - new Date((await api(service.baseUrl, 'GET', `/task/${s.sessionId}/${r.body.taskId}`)).body.completedAt).getTime());
    }

    // step cycle as the model sees it: from one request to the next (the model itself answers at once)
    const reqs = await recordedRequests(model.url, token);
    const arrivals = reqs.map((r: any) => Number(r.at));
    const cycles = arrivals.slice(1).map((a, i) => a - arrivals[i]);

    // where the time went, from the workflow's history: activity results and event times
    const client = new Client({ connection, namespace: 'browser-agent' });
    const history = await client.workflow.getHandle(`session-${s.sessionId}`).fetchHistory();
    const codec = new EncryptionCodec(Buffer.from(fs.readFileSync(path.join(process.env.DATA_DIR ?? path.join(ROOT, '.data/test'), 'payload.key'), 'utf8').trim(), 'hex'));
    const time = (e: any) => Number(e.eventTime.seconds) * 1000 + Math.round(Number(e.eventTime.nanos) / 1e6);
    const scheduled = new Map<string, { at: number; type: string }>();
    const started = new Map<string, number>();
    const observe: number[] = [];
    const act: number[] = [];
    const modelMs: number[] = [];
    const activity: number[] = [];
    const temporalOverhead: number[] = [];
    let lastStepCompleted: number | undefined;
    for (const e of history.events ?? []) {
      const id = String(e.eventId);
      if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { at: time(e), type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '' });
      if (e.activityTaskStartedEventAttributes) started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), time(e));
      const done = e.activityTaskCompletedEventAttributes;
      if (!done) continue;
      const sch = scheduled.get(String(done.scheduledEventId));
      if (sch?.type !== 'agentStep') continue;
      const [payload] = await codec.decode(done.result?.payloads ?? []);
      const result = defaultPayloadConverter.fromPayload<any>(payload);
      if (!result.timings) continue;
      observe.push(result.timings.observeMs);
      act.push(result.timings.actMs);
      modelMs.push(result.timings.modelMs);
      const end = time(e);
      activity.push(end - started.get(String(done.scheduledEventId))!);
      // Temporal's share: from the previous step's completion to this step's start on the worker
      if (lastStepCompleted !== undefined) temporalOverhead.push(started.get(String(done.scheduledEventId))! - lastStepCompleted);
      lastStepCompleted = end;
    }
    const outsideModel = activity.map((a, i) => a - modelMs[i] + (temporalOverhead[i - 1] ?? 0)).slice(1);

    const out = {
      benchmark: 'agent-step',
      page: 'big.html (about 1,600 interactive elements)',
      steps: STEPS,
      taskTotalMs: Math.round(total),
      perStepOutsideModelMs: summary(outsideModel),
      perStepCycleSeenByModelMs: summary(cycles),
      breakdownMs: {
        observation: summary(observe),
        action: summary(act),
        modelCall: summary(modelMs),
        decisionPlumbing: summary(activity.map((a, i) => a - observe[i] - act[i] - modelMs[i])),
        temporalRoundTrip: summary(temporalOverhead),
      },
      observationTokens: reqs.length ? Math.ceil(JSON.stringify(reqs[reqs.length - 1].body.messages.at(-1)).length / 4) : null,
      completionToInlineAnswerMs: summary(completionToAnswer),
      sessionCreateMs: summary(creates),
      sessionCreateBreakdownMs: createBreakdown(service.output()),
      target: { perStepOutsideModelP50Ms: 150, completionToInlineAnswerMs: 100 },
    };
    fs.writeFileSync(process.env.BENCH_OUT ?? path.join(ROOT, '.data/bench-result.json'), JSON.stringify(out, null, 2));
  } finally {
    await connection.close();
    await service.stop();
    await fixtures.close();
    await model.close();
  }
});
