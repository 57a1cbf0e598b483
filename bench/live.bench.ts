/**
 * The live side, through the real stack: event fan-out to a Socket.IO client, a manual
 * CLICK from HTTP to the page, the live view's frame rate while the page animates, and
 * the restore of a session after its worker is SIGKILLed. Writes JSON to BENCH_LIVE_OUT.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { startFixtureServer } from '../test/support/fixtures-server';
import { api, waitFor } from '../test/support/http';
import { registerScript, startScriptedModel } from '../test/support/scripted-model';
import { createUser, ROOT, startService, type ServiceProcess } from '../test/support/service';
import { connectSession } from '../test/support/socket';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10 : null;
};

/** Counts MJPEG parts arriving at a viewer for `ms`. */
function mjpegFps(url: string, ms: number): Promise<{ fps: number; frames: number }> {
  return new Promise((resolve, reject) => {
    let frames = 0;
    const req = http.get(url, (res) => {
      res.on('data', (chunk: Buffer) => {
        frames += chunk.toString('latin1').split('Content-Type: image/jpeg').length - 1;
      });
    });
    req.on('error', reject);
    setTimeout(() => {
      req.destroy();
      resolve({ fps: Math.round((frames / (ms / 1000)) * 10) / 10, frames });
    }, ms);
  });
}

it('live benchmarks', async () => {
  const model = await startScriptedModel();
  const fixtures = await startFixtureServer(path.join(ROOT, 'test/fixtures'));
  process.env.TEST_FIXTURES_URL = fixtures.url;
  process.env.TEST_LLM_BASE_URL = model.url;
  const queue = `bench-live-${Date.now()}`;
  const common = { LOG_LEVEL: 'warn', TEMPORAL_TASK_QUEUE: queue, RATE_LIMIT_PER_MINUTE: '100000', REDIS_URL: `${process.env.TEST_REDIS_URL}/3`, WORKER_TTL_MS: '3000' };
  const apiProc = await startService({ ...common, ROLE: 'api', INLINE_WAIT_MS: '120000' });
  const workers: ServiceProcess[] = [];
  workers.push(await startService({ ...common, ROLE: 'worker' }));
  workers.push(await startService({ ...common, ROLE: 'worker' }));
  const out: Record<string, unknown> = { benchmark: 'live' };
  try {
    await waitFor(async () => (await api(apiProc.baseUrl, 'GET', '/start/health')).body.instanceCount === 2, 20_000);
    const { apiKey: key } = await createUser({ balance: 100 });

    // 1. fan-out: agent actions to a socket client
    const token = `[bench-fanout-${Date.now()}]`;
    await registerScript(model.url, { match: token, steps: [...Array.from({ length: 60 }, () => ({ tool: 'wait', args: { seconds: 0.1 } })), { tool: 'done', args: { message: 'ok' } }] });
    const s = (await api(apiProc.baseUrl, 'POST', '/start/start-session', { key, body: {} })).body;
    const live = await connectSession(apiProc.baseUrl, { sessionId: s.sessionId });
    const arrivals: number[] = [];
    live.socket.on('message', (m: any) => {
      if (m.type === 'action') arrivals.push(Date.now() - m.timestamp);
    });
    await api(apiProc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId: s.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${token} wait`, startingUrl: `${fixtures.url}/animate.html` } } });
    out.eventFanOutMs = { p50: pct(arrivals, 50), p99: pct(arrivals, 99), n: arrivals.length, target: { p99: 50 } };

    // 2. manual CLICK: HTTP request to the page's click handler
    const clicks: number[] = [];
    for (let i = 0; i < 30; i++) {
      const before = fixtures.beacons.length;
      const sentAt = Date.now();
      const r = await api(apiProc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId: s.sessionId, message: { actionType: 'interaction', action: { type: 'CLICK', x: 500, y: 75 + 155 } } } });
      if (r.status !== 200) throw new Error(`click: ${r.text}`);
      const beacon = await waitFor(async () => fixtures.beacons[before], 5000, 5);
      clicks.push(beacon.t - sentAt);
    }
    out.manualClickMs = { p50: pct(clicks, 50), p95: pct(clicks, 95), n: clicks.length, target: { p50: 60 } };

    // 3. the live view (MJPEG) while the page animates
    const streamUrl = s.streaming.webViewURL.replace(`/view/${s.sessionId}?`, `/view/${s.sessionId}/stream?`);
    await mjpegFps(streamUrl, 1500); // the screencast starts on demand
    out.liveViewFps = { ...(await mjpegFps(streamUrl, 5000)), size: '1024x600', target: { fps: 10 } };

    // 4. restore after SIGKILL of the worker holding the session
    const holder = await waitFor(async () => {
      for (const w of workers) if ((await fetchSessionsOpen(w)) > 0) return w;
      return null;
    }, 10_000);
    const killedAt = Date.now();
    holder.child.kill('SIGKILL');
    const lost = await live.waitFor((r) => r.event === 'instance:disconnected', 60_000);
    const back = await live.waitFor((r) => r.event === 'instance:reconnected', 60_000);
    out.restoreAfterSigkillMs = {
      value: back.payload.timestamp - killedAt,
      detectedAfter: lost.payload.timestamp - killedAt,
      restoredAfterDetection: back.payload.timestamp - lost.payload.timestamp,
      target: 15_000,
    };
    live.socket.close();
  } finally {
    fs.writeFileSync(process.env.BENCH_LIVE_OUT ?? path.join(ROOT, '.data/bench-live.json'), JSON.stringify(out, null, 2));
    await Promise.all([apiProc.stop(), ...workers.map((w) => w.stop('SIGKILL'))]);
    await fixtures.close();
    await model.close();
  }

  /** How many sessions a worker holds, from its own registry entry. */
  async function fetchSessionsOpen(w: ServiceProcess): Promise<number> {
    const { Redis } = await import('ioredis');
    const redis = new Redis(common.REDIS_URL);
    try {
      const all = await redis.hgetall('bas:workers');
      const entry = Object.values(all).map((v) => JSON.parse(v)).find((e: any) => w.output().includes(e.workerId));
      return entry?.sessions ?? 0;
    } finally {
      redis.disconnect();
    }
  }
});
