import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { COUNTRY_CODES } from '../../src/contracts/schemas/session.schema';
import { registerScript, startScriptedModel, type ScriptedModel } from '../support/scripted-model';
import { admin, freePort, ROOT, serviceEnv, startService, type ServiceProcess } from '../support/service';

/**
 * The served OpenAPI document against the server: schemathesis (installed by
 * scripts/test.sh, `ensure_schemathesis`) generates requests from the document, valid and
 * invalid ones, sends them with one user's key and checks every answer (--checks all):
 * valid requests are taken, invalid ones refused, statuses, media types, bodies, events and
 * `Allow` are the documented ones, created resources can be read. Any mismatch fails.
 *
 * The service is one of its own: its own database, blob directory, Redis database and workflow queue, a scripted
 * model whose every task ends with an answer, and per-user limits raised so the requests
 * reach the logic behind them (the limits themselves are the documented 429s, checked
 * against the routes by src/api/openapi/document.test.ts). Sessions close 5 s after their
 * last request, so the ones it opens give their browsers back at once.
 *
 * SCHEMATHESIS_MAX_EXAMPLES (default 4 per operation) and SCHEMATHESIS_SEED (default 1)
 * bound and fix the run; README "Testing" has the figures and a longer run.
 */
const BIN = process.env.SCHEMATHESIS_BIN ?? '';
const available = BIN !== '' && fs.existsSync(BIN);
if (!available) {
  process.stderr.write('schemathesis.test.ts is skipped: schemathesis is not installed (scripts/test.sh installs it with ensure_schemathesis and sets SCHEMATHESIS_BIN)\n');
}
const maxExamples = process.env.SCHEMATHESIS_MAX_EXAMPLES ?? '4';
const seed = process.env.SCHEMATHESIS_SEED ?? '1';
const RUN_BUDGET_MS = Number(process.env.SCHEMATHESIS_TIMEOUT_MS ?? 15 * 60_000);

function run(bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_BUDGET_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * A run whose one error is Hypothesis refusing to build send-message's smallest body (the
 * union of message kinds with a task whose secrets' match follows the scheme-and-host
 * pattern: "Minimum possible example is too large"), with every generated case passed and
 * no failure. That says what the generator cannot build, nothing of the server; the
 * operation is still tested by the coverage and stateful phases. Anything else fails.
 */
function onlyGeneratorLimit(output: string, summary: string): boolean {
  const cases = /Test cases:\s+(\d+) generated, (\d+) passed/.exec(summary);
  const errorsBlock = output.slice(output.indexOf('= ERRORS ='), output.indexOf('= WARNINGS =') >= 0 ? output.indexOf('= WARNINGS =') : undefined);
  const operations = errorsBlock.match(/^_{3,} .+ _{3,}$/gm) ?? [];
  return (
    cases !== null &&
    cases[1] === cases[2] &&
    !/\d+ failed|Failures:/.test(summary) &&
    /Failed Health Check: 1\b/.test(summary) &&
    operations.length === 1 &&
    operations[0].includes('POST /start/send-message') &&
    errorsBlock.includes('Minimum possible example is too large')
  );
}

(available ? describe : describe.skip)('the OpenAPI document says what the server does (schemathesis --checks all)', () => {
  let model: ScriptedModel;
  let service: ServiceProcess;
  let apiKey: string;
  let work: string;

  beforeAll(async () => {
    model = await startScriptedModel();
    // Every task answers at once: a valid chat completion or task is a 200.
    await registerScript(model.url, { match: '', steps: [{ tool: 'done', args: { message: 'Done.' } }] });
    const closedPort = await freePort();
    // Its own database and blob directory too: the thousands of records it leaves must not reach other tests' counts and sweeps.
    const own = { MONGODB_URL: serviceEnv().MONGODB_URL.replace(/\/[^/?]*(\?.*)?$/, '/browser_agent_schemathesis$1'), BLOB_DIR: path.join(serviceEnv().DATA_DIR, 'blobs-schemathesis') };
    service = await startService({
      ...own,
      LLM_BASE_URL: model.url,
      REDIS_URL: `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/20`,
      TEMPORAL_TASK_QUEUE: `schemathesis-${Date.now()}`,
      RATE_LIMIT_PER_MINUTE: '100000',
      UPLOAD_RATE_LIMIT_PER_MINUTE: '100000',
      CRON_JOBS_RATE_LIMIT_PER_MINUTE: '100000',
      POLICIES_RATE_LIMIT_PER_MINUTE: '100000',
      WEBHOOKS_RATE_LIMIT_PER_MINUTE: '100000',
      RECORDINGS_RATE_LIMIT_PER_MINUTE: '100000',
      PROFILES_RATE_LIMIT_PER_15_MINUTES: '100000',
      MAX_TRIGGERS_PER_USER: '100000',
      MAX_POLICIES_PER_USER: '1000',
      MCP_SESSION_IDLE_MS: '2000',
      SESSION_IDLE_TIMEOUT_MS: '5000',
      BROWSER_MAX_SESSIONS: '8',
      INLINE_WAIT_MS: '20000',
      NAVIGATION_TIMEOUT_MS: '4000',
      // A managed proxy for every country (a closed port: a session on it fails to start, 503), so no valid proxy request is refused for want of one.
      MANAGED_PROXIES: JSON.stringify(COUNTRY_CODES.map((country) => ({ country, url: `http://user:pass@127.0.0.1:${closedPort}` }))),
    });
    const user = await admin(['users', 'create', '--email', `schemathesis${Date.now()}@example.test`, '--balance', '1000', '--session-limit', '3'], own);
    if (user.code !== 0) throw new Error(`admin users create failed: ${user.stderr}`);
    apiKey = user.json.apiKey;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'schemathesis-'));
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await model?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it(
    'finds no request the server treats otherwise than the document says',
    async () => {
      const args = [
        '--config-file',
        path.join(ROOT, 'test/support/schemathesis.toml'),
        'run',
        `${service.baseUrl}/openapi.json`,
        '--header',
        `Authorization: Bearer ${apiKey}`,
        '--checks',
        'all',
        '--max-examples',
        maxExamples,
        '--seed',
        seed,
        '--workers',
        '2',
        '--report',
        'junit',
        '--report-junit-path',
        path.join(ROOT, '.data/schemathesis-junit.xml'),
        '--request-timeout',
        '60',
        '--generation-database',
        'none',
        // Operations with few distinct inputs (a fixed asset name, the one model) trip Hypothesis's "too many filtered" health check,
        // and send-message's smallest valid body (a task whose secrets' match follows the scheme-and-host pattern) trips its
        // "large base example" check: both say what the generator finds hard, nothing of the server.
        '--suppress-health-check',
        'filter_too_much,large_base_example',
        '--no-color',
      ];
      const env = { ...process.env, SCHEMATHESIS_HOOKS: 'schemathesis_hooks', PYTHONPATH: path.join(ROOT, 'test/support'), NO_COLOR: '1', SCHEMATHESIS_BASE_URL: service.baseUrl, SCHEMATHESIS_API_KEY: apiKey };
      const started = Date.now();
      const { code, output } = await run(BIN, args, env, work);
      // The summary without its banner lines: schemathesis closes with pytest's closing line ("=== 1 warning in 95.55s ==="),
      // which a reader of the suite's output would take for a pytest run that executed no test.
      const summary = output
        .slice(output.indexOf('\n', output.lastIndexOf('SUMMARY')) + 1)
        .split('\n')
        .filter((line) => !/^\s*={3,}/.test(line))
        .join('\n');
      process.stdout.write(`schemathesis ${Math.round((Date.now() - started) / 1000)} s, exit ${code}\n${summary}\n`);
      if (code !== 0) {
        // The errors (schemathesis could not test an operation) and failures (mismatches), each with the request to reproduce it.
        const from = ['ERRORS', 'FAILURES'].map((h) => output.indexOf(`= ${h} =`)).filter((i) => i >= 0);
        process.stdout.write(`${output.slice(from.length ? Math.max(0, Math.min(...from) - 40) : 0, output.lastIndexOf('SUMMARY'))}\n`);
      }
      expect(summary).toMatch(/Test cases:\s+\d+ generated/);
      expect(code === 0 || onlyGeneratorLimit(output, summary)).toBe(true);
    },
    RUN_BUDGET_MS + 60_000,
  );
});
