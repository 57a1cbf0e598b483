/**
 * The evaluation run (npm run eval → scripts/eval.sh → this file, jest project `eval`): every
 * selected task on the local sites, one after another, against the model the environment
 * configures (LLM_PROVIDER, LLM_BASE_URL, LLM_API_KEY, LLM_MODEL), through a measuring proxy.
 * Writes the JSON report to EVAL_OUT. EVAL_SCRIPTED=1 runs the tasks' right scripts on the
 * scripted model instead (a check of the harness itself: every task must pass).
 *
 * Settings: EVAL_TASKS (ids or tiers, comma-separated), EVAL_REPEAT (runs of each task),
 * EVAL_TASK_TIMEOUT_MS (wall-clock cap of one task, 6 min), EVAL_MAX_STEPS (the agent's step
 * limit, 20).
 */
import fs from 'node:fs';
import path from 'node:path';
import { startScriptedModel, type ScriptedModel } from '../test/support/scripted-model';
import { createUser, ROOT, startService, type ServiceProcess } from '../test/support/service';
import { startModelProxy, type ModelProxy } from './model-proxy';
import { summarise, summariseTiers, taskResult, type TaskResult } from './report';
import { runEvalTask } from './run-task';
import { startSiteServer, type SiteServer } from './site-server';
import { selectTasks } from './tasks';

const log = (line: string) => process.stderr.write(`[eval ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const int = (v: string | undefined, d: number) => (v && /^\d+$/.test(v) && Number(v) > 0 ? Number(v) : d);

const OUT = process.env.EVAL_OUT ?? path.join(ROOT, '.data/eval-results/eval.json');
const REPEAT = int(process.env.EVAL_REPEAT, 1);
const TASK_TIMEOUT_MS = int(process.env.EVAL_TASK_TIMEOUT_MS, 360_000);
const MAX_STEPS = int(process.env.EVAL_MAX_STEPS, 20);
const SCRIPTED = process.env.EVAL_SCRIPTED === '1';

/** The LLM_* settings passed on to the service as they are (a local provider's threads, vision, prices...). */
function passedOnLlmSettings(): Record<string, string> {
  const own = new Set(['LLM_PROVIDER', 'LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL']);
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('LLM_') && !own.has(e[0]) && e[1] !== undefined));
}

it(
  'runs the evaluation tasks',
  async () => {
    const tasks = selectTasks(process.env.EVAL_TASKS);
    const startedAt = new Date().toISOString();
    let sites: SiteServer | undefined;
    let scripted: ScriptedModel | undefined;
    let proxy: ModelProxy | undefined;
    let service: ServiceProcess | undefined;
    try {
      sites = await startSiteServer();
      let provider: 'openai' | 'anthropic';
      let upstream: string;
      let model: string;
      let apiKey: string;
      if (SCRIPTED) {
        scripted = await startScriptedModel();
        [provider, upstream, model, apiKey] = ['openai', scripted.url, 'scripted-model', 'test-key'];
      } else if (process.env.LLM_PROVIDER === 'local') {
        // The local model role: the service runs it as LLM_PROVIDER=local (its tools bound to the page), through the proxy.
        [provider, upstream, model, apiKey] = ['openai', process.env.LOCAL_MODEL_URL ?? 'http://127.0.0.1:3090/v1', 'local', 'local'];
      } else {
        provider = process.env.LLM_PROVIDER === 'anthropic' ? 'anthropic' : 'openai';
        upstream = process.env.LLM_BASE_URL || (provider === 'anthropic' ? 'https://api.anthropic.com' : 'https://api.openai.com/v1');
        model = process.env.LLM_MODEL || (provider === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o-mini');
        apiKey = process.env.LLM_API_KEY ?? '';
      }
      proxy = await startModelProxy({ upstream, provider, trace: process.env.EVAL_TRACE ?? path.join(path.dirname(OUT), 'calls.jsonl') });
      log(`model ${model} (${provider}) at ${upstream}; ${tasks.length} task(s) × ${REPEAT}; sites on ${sites.url}`);
      const local = !SCRIPTED && process.env.LLM_PROVIDER === 'local';
      service = await startService({
        ...passedOnLlmSettings(),
        ...(local ? { LLM_PROVIDER: 'local', LOCAL_MODEL_URL: proxy.baseUrl, ...(process.env.MODEL_API_KEY ? { MODEL_API_KEY: process.env.MODEL_API_KEY } : {}) } : { LLM_PROVIDER: provider }),
        LLM_BASE_URL: proxy.baseUrl,
        LLM_MODEL: model,
        LLM_API_KEY: apiKey,
        LLM_PRICES: process.env.LLM_PRICES ?? JSON.stringify({ '*': { input: 0, output: 0 } }),
        // a local model on a small machine may take long for one answer
        LLM_TIMEOUT_MS: process.env.LLM_TIMEOUT_MS ?? '300000',
        PRIVATE_NETWORK_ALLOWLIST: `127.0.0.1:${sites.port}`,
        TEMPORAL_TASK_QUEUE: `eval-${Date.now()}`,
        INLINE_WAIT_MS: '60000',
        MAX_AGENT_STEPS: String(MAX_STEPS),
        RATE_LIMIT_PER_MINUTE: '1000',
        LOG_LEVEL: process.env.EVAL_LOG_LEVEL ?? 'warn',
      });
      const { apiKey: key } = await createUser({ balance: 1000 });
      const ctx = { baseUrl: service.baseUrl, apiKey: () => key, sites, timeoutMs: TASK_TIMEOUT_MS, scriptedModelUrl: scripted?.url, log };

      const results: TaskResult[] = [];
      for (let repeat = 1; repeat <= REPEAT; repeat++) {
        for (const task of tasks) {
          log(`${task.id} (${task.tier}${REPEAT > 1 ? `, run ${repeat}` : ''})…`);
          const run = await runEvalTask(ctx, task, SCRIPTED ? { steps: task.scripted.right } : {});
          await proxy.idle();
          const result = taskResult(task, repeat, run, proxy.calls);
          results.push(result);
          log(`${task.id}: ${result.verdict}, ${result.steps} steps, ${(result.wallMs / 1000).toFixed(1)} s (model ${(result.modelMs / 1000).toFixed(1)} s), ${result.promptTokens} prompt tokens`);
        }
      }
      const report = {
        model: { provider, name: model, baseUrl: upstream, scripted: SCRIPTED },
        startedAt,
        finishedAt: new Date().toISOString(),
        settings: { repeat: REPEAT, maxSteps: MAX_STEPS, taskTimeoutMs: TASK_TIMEOUT_MS, selected: process.env.EVAL_TASKS || 'all' },
        notes: {
          steps: 'the agent steps the task recording lists (stepsFrom: recording); the model calls when it could not be read',
          time: 'wallMs runs from submitting the task to seeing it end; modelMs is the time in model calls (measured at a proxy), serviceMs the rest; perStep divides both by steps',
        },
        tasks: results,
        tiers: summariseTiers(results),
        total: summarise(results),
      };
      fs.mkdirSync(path.dirname(OUT), { recursive: true });
      fs.writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
      log(`passed ${report.total.passed} of ${report.total.tasks}; report in ${OUT}`);
      // tasks failing is a result; every task failing to run at all is a broken run
      if (results.length && results.every((r) => r.verdict === 'error')) throw new Error(`every task errored; first: ${results[0].reason}`);
    } finally {
      await service?.stop();
      await proxy?.close();
      await scripted?.close();
      await sites?.close();
    }
  },
  48 * 3_600_000,
);
