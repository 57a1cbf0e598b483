/**
 * Hostile output schemas against the API: the latency of `GET /start/health` while five
 * clients keep submitting 1,000-property schemas (each a new one, so nothing is cached),
 * against the same without them; and how long an evil pattern takes to be refused.
 * Writes JSON to BENCH_SCHEMA_OUT (or prints it).
 */
import fs from 'node:fs';
import { api } from '../test/support/http';
import { createUser, startService } from '../test/support/service';
import { closeSchemaWorkers, checkStructuredOutput, outputSchemaProblem } from '../src/agent/structured-output';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10 : null;
};
const stats = (xs: number[]) => ({ samples: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), max: pct(xs, 100) });

let seed = 0;
/** A schema of 1,000 string properties (about 30 KB), new names every time. */
const wideSchema = () => {
  const s = ++seed;
  return { type: 'object', properties: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`p${s}_${i}`, { type: 'string', minLength: 1 }])), required: [`p${s}_0`] };
};

async function healthLatencies(baseUrl: string, ms: number): Promise<number[]> {
  const out: number[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const t = performance.now();
    await api(baseUrl, 'GET', '/start/health');
    out.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 50));
  }
  return out;
}

it('health latency under hostile schemas', async () => {
  const apiProc = await startService({ ROLE: 'api', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000', TEMPORAL_TASK_QUEUE: `bench-schema-${Date.now()}` });
  const out: Record<string, unknown> = { benchmark: 'schema-health' };
  try {
    const { apiKey: key } = await createUser({ balance: 100 });
    out.idle = stats(await healthLatencies(apiProc.baseUrl, 5000));

    let stop = false;
    const submitted: number[] = [];
    const statuses: Record<string, number> = {};
    const client = async () => {
      while (!stop) {
        const t = performance.now();
        const res = await api(apiProc.baseUrl, 'POST', '/start/run-task', { key, body: { task: { prompt: 'x', outputType: 'structured_json', outputSchema: wideSchema() } } });
        submitted.push(performance.now() - t);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    };
    const clients = Array.from({ length: 5 }, client);
    const underLoad = await healthLatencies(apiProc.baseUrl, 15_000);
    stop = true;
    await Promise.all(clients);
    out.underFiveHostileClients = { health: stats(underLoad), submissions: { ...stats(submitted), statuses } };
  } finally {
    await apiProc.stop();
  }

  // In this process: one 1,000-property schema compiled on a schema thread, and the evil pattern.
  const t0 = performance.now();
  await outputSchemaProblem(wideSchema());
  out.compileOneThousandPropertiesMs = Math.round(performance.now() - t0);
  const evilSchema = { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+$' } } };
  await checkStructuredOutput({ outputType: 'structured_json', outputSchema: evilSchema }, '{"code":"warm"}');
  const evil: Record<string, number> = {};
  for (const n of [30, 1000, 50_000]) {
    const t = performance.now();
    const res = await checkStructuredOutput({ outputType: 'structured_json', outputSchema: evilSchema }, JSON.stringify({ code: `${'a'.repeat(n)}b` }));
    if (res.ok) throw new Error('the evil value was accepted');
    evil[`refuse${n}CharsMs`] = Math.round((performance.now() - t) * 10) / 10;
  }
  // The backtracking engine on the same pattern, on a short value only (it doubles with each character).
  const t1 = performance.now();
  /^(a+)+$/.test(`${'a'.repeat(24)}b`);
  evil.backtrackingRegExp24CharsMs = Math.round(performance.now() - t1);
  out.evilPattern = evil;
  await closeSchemaWorkers();

  const json = JSON.stringify(out, null, 2);
  if (process.env.BENCH_SCHEMA_OUT) fs.writeFileSync(process.env.BENCH_SCHEMA_OUT, json);
  process.stdout.write(`${json}\n`);
}, 180_000);
