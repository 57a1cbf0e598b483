import fs from 'node:fs';
import path from 'node:path';
import { freePort, startService, ROOT } from './service';
import { startScriptedModel } from './scripted-model';
import { startFixtureServer } from './fixtures-server';
import { reserveAllowedPorts } from './ports';

/**
 * Starts what every end-to-end test shares: the scripted model, the fixture pages and one
 * service (API + browser worker). Infrastructure (Temporal, FerretDB, Redis) is started
 * by scripts/test.sh. Tests read the addresses from the environment.
 */
export default async function globalSetup(): Promise<void> {
  const model = await startScriptedModel();
  const fixtures = await startFixtureServer(path.join(ROOT, 'test/fixtures'));
  process.env.TEST_LLM_BASE_URL = model.url;
  process.env.TEST_FIXTURES_URL = fixtures.url;
  process.env.TEST_ALLOWED_PORTS = await reserveAllowedPorts();
  // Each run gets its own workflow queue so leftovers of an earlier run never interfere.
  process.env.TEST_TASK_QUEUE = `sessions-${Date.now()}`;
  // A generous inline wait: a loaded 2-core CI machine must not turn inline answers into pending ones.
  // Room for the sessions of two test files running at once, whatever they leave open for a while.
  // The worker's own /metrics (and the Temporal SDK's metrics it includes) on ports of their own.
  const [metricsPort, temporalMetricsPort] = [await freePort(), await freePort()];
  const service = await startService({ INLINE_WAIT_MS: '25000', NAVIGATION_TIMEOUT_MS: '4000', BROWSER_MAX_SESSIONS: '30', METRICS_PORT: String(metricsPort), TEMPORAL_METRICS_PORT: String(temporalMetricsPort) });
  process.env.TEST_API_URL = service.baseUrl;
  process.env.TEST_WORKER_METRICS_URL = `http://127.0.0.1:${metricsPort}/metrics`;
  (globalThis as any).__e2e = { model, fixtures, service };
  fs.mkdirSync(path.join(ROOT, '.data'), { recursive: true });
}
