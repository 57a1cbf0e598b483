/**
 * What an idle session costs, with its browser and after SESSION_IDLE_DISCARD_MS let it go,
 * and what the next task then waits for the browser to come back. Proportional set size of
 * the service and its Chromium (this machine: 2 cores), from outside through HTTP.
 *   BENCH_IDLE_SESSIONS (10), BENCH_IDLE_DISCARD_MS (10000); JSON to BENCH_IDLE_OUT.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startFixtureServer } from '../test/support/fixtures-server';
import { api, waitFor } from '../test/support/http';
import { recordedRequests, registerScript, startScriptedModel } from '../test/support/scripted-model';
import { createUser, ROOT, startService } from '../test/support/service';
import { treePss } from './process-tree';

const SESSIONS = Number(process.env.BENCH_IDLE_SESSIONS ?? 10);
const DISCARD_MS = Number(process.env.BENCH_IDLE_DISCARD_MS ?? 10_000);
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]) : null;
};
const settle = () => new Promise((r) => setTimeout(r, 4000));

it('idle sessions with and without their browser', async () => {
  const model = await startScriptedModel();
  const fixtures = await startFixtureServer(path.join(ROOT, 'test/fixtures'));
  process.env.TEST_FIXTURES_URL = fixtures.url;
  process.env.TEST_LLM_BASE_URL = model.url;
  const service = await startService({
    LOG_LEVEL: 'warn',
    TEMPORAL_TASK_QUEUE: `bench-idle-${Date.now()}`,
    SESSION_IDLE_DISCARD_MS: String(DISCARD_MS),
    BROWSER_MAX_SESSIONS: String(SESSIONS + 5),
    DEFAULT_SESSION_LIMIT: '100',
    RATE_LIMIT_PER_MINUTE: '1000',
  });
  try {
    await settle(); // the ready contexts are made
    const baseline = treePss(service.child.pid!);
    const { apiKey: key } = await createUser({ balance: 1000, sessionLimit: 100 });
    const stamp = Date.now();
    // Each session did a task on a form (a page with typed state), then idles.
    const sessions = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, i) => {
        const t = `[bench-idle-${i}-${stamp}]`;
        await registerScript(model.url, { match: t, steps: [{ tool: 'input_text', args: { index: { ref: 'Name' }, text: `Ada ${i}` } }, { tool: 'done', args: { message: 'typed' } }] });
        const r = await api(service.baseUrl, 'POST', '/start/start-session', { key, body: { task: { prompt: `${t} type`, startingUrl: `${fixtures.url}/form.html` } } });
        if (r.status !== 200) throw new Error(`session ${i}: ${r.text}`);
        await waitFor(async () => ((await api(service.baseUrl, 'GET', `/task/${r.body.sessionId}/${r.body.taskId}`, { key })).body.status === 'task_completed' ? true : null), 60_000, 500);
        return r.body.sessionId as string;
      }),
    );
    await settle();
    const withBrowser = treePss(service.child.pid!);
    // Past SESSION_IDLE_DISCARD_MS every session lets its browser go.
    const open = async () => (await api(service.baseUrl, 'GET', '/start/health')).body.sessionsOpen as number;
    await waitFor(async () => ((await open()) === 0 ? true : null), DISCARD_MS + 60_000, 1000);
    await settle();
    const discarded = treePss(service.child.pid!);
    // The next task of each, one after another: from the request to the model's first request.
    const wake: number[] = [];
    for (const [i, sessionId] of sessions.entries()) {
      const t = `[bench-wake-${i}-${stamp}]`;
      await registerScript(model.url, { match: t, steps: [{ tool: 'done', args: { message: 'awake' } }] });
      const sent = Date.now();
      const r = await api(service.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${t} again` } } });
      if (r.body.type !== 'task_completed') throw new Error(`wake ${i}: ${r.text}`);
      const [first] = await recordedRequests(model.url, t);
      wake.push(first.at - sent);
    }
    const out = {
      sessions: SESSIONS,
      discardAfterMs: DISCARD_MS,
      memoryMB: {
        baseline: mb(baseline),
        idleWithBrowser: mb(withBrowser),
        idleDiscarded: mb(discarded),
        perIdleSessionWithBrowser: mb((withBrowser - baseline) / SESSIONS),
        perIdleSessionDiscarded: mb((discarded - baseline) / SESSIONS),
      },
      nextTaskToFirstModelRequestMs: { p50: pct(wake, 50), p95: pct(wake, 95), n: wake.length },
      target: { perIdleSessionMB: 40 },
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    fs.writeFileSync(process.env.BENCH_IDLE_OUT ?? path.join(ROOT, '.data/bench-idle-memory.json'), JSON.stringify(out, null, 2));
  } finally {
    await service.stop();
    await model.close();
    await fixtures.close();
  }
}, 900_000);
