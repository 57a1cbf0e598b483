/**
 * The evaluation run (npm run eval → scripts/eval.sh → this file, jest project `eval`): every
 * selected task on the local sites, one after another, against the model the environment
 * configures (LLM_PROVIDER, LLM_BASE_URL, LLM_API_KEY, LLM_MODEL), through a measuring proxy.
 * Writes the JSON report to EVAL_OUT. EVAL_SCRIPTED=1 runs the tasks' right scripts on the
 * scripted model instead (a check of the harness itself: every task must pass).
 *
 * Settings: EVAL_SPLIT (tuning, the default; dev; test; all), EVAL_TASKS (ids or tiers,
 * comma-separated, within the split), EVAL_REPEAT (runs of each task, 3), EVAL_CONCURRENCY (tasks
 * run at once, 1: more measure the pass rate sooner, each step then sharing the model), EVAL_TASK_TIMEOUT_MS
 * (wall-clock cap of one task, 6 min), EVAL_MAX_STEPS (the agent's step limit, 20),
 * EVAL_DOCS_ROW=0 (no row in docs/eval.md). A run with a real model appends a row per split to
 * the results table of docs/eval.md; a scripted run never does.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startScriptedModel, type ScriptedModel } from '../test/support/scripted-model';
import { createUser, ROOT, startService, type ServiceProcess } from '../test/support/service';
import { startModelProxy, type ModelProxy } from './model-proxy';
import { summariseSplits, taskResult, type TaskResult } from './report';
import { appendResultRows, resultRows } from './results-table';
import { newRunId, runEvalTask, type RunContext } from './run-task';
import { startSiteServer, type SiteServer } from './site-server';
import { parseSplit, selectTasks, type EvalTask } from './tasks';

const log = (line: string) => process.stderr.write(`[eval ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const int = (v: string | undefined, d: number) => (v && /^\d+$/.test(v) && Number(v) > 0 ? Number(v) : d);

const OUT = process.env.EVAL_OUT ?? path.join(ROOT, '.data/eval-results/eval.json');
const REPEAT = int(process.env.EVAL_REPEAT, 3);
const SPLIT = parseSplit(process.env.EVAL_SPLIT);
const TASK_TIMEOUT_MS = int(process.env.EVAL_TASK_TIMEOUT_MS, 360_000);
const MAX_STEPS = int(process.env.EVAL_MAX_STEPS, 20);
const SCRIPTED = process.env.EVAL_SCRIPTED === '1';
const CONCURRENCY = int(process.env.EVAL_CONCURRENCY, 1);
/** The runs under way: the proxy tags each model request with the run whose site address it names. */
const running = new Set<string>();
const DOCS = path.join(ROOT, 'docs/eval.md');

/** The LLM_* settings passed on to the service as they are (a local provider's threads, vision, prices...). */
function passedOnLlmSettings(): Record<string, string> {
  const own = new Set(['LLM_PROVIDER', 'LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL']);
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('LLM_') && !own.has(e[0]) && e[1] !== undefined));
}

interface ModelTarget {
  provider: 'openai' | 'anthropic';
  upstream: string;
  /** What the service is configured with (LLM_MODEL). */
  model: string;
  /** The model's name in the report: the local model's file when the service runs it. */
  name: string;
  apiKey: string;
}

/** The model the run measures: the scripted one, the local one, or the configured hosted one. */
function modelTarget(scripted: ScriptedModel | undefined): ModelTarget {
  if (scripted) return { provider: 'openai', upstream: scripted.url, model: 'scripted-model', name: 'scripted-model', apiKey: 'test-key' };
  if (process.env.LLM_PROVIDER === 'local') {
    // The local model role: the service runs it as LLM_PROVIDER=local (its tools bound to the page), through the proxy.
    return { provider: 'openai', upstream: process.env.LOCAL_MODEL_URL ?? 'http://127.0.0.1:3090/v1', model: 'local', name: process.env.EVAL_MODEL_NAME || 'local', apiKey: 'local' };
  }
  const provider = process.env.LLM_PROVIDER === 'anthropic' ? 'anthropic' : 'openai';
  const model = process.env.LLM_MODEL || (provider === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4o-mini');
  return {
    provider,
    upstream: process.env.LLM_BASE_URL || (provider === 'anthropic' ? 'https://api.anthropic.com' : 'https://api.openai.com/v1'),
    model,
    name: model,
    apiKey: process.env.LLM_API_KEY ?? '',
  };
}

function startEvalService(target: ModelTarget, proxy: ModelProxy, sites: SiteServer): Promise<ServiceProcess> {
  const local = !SCRIPTED && process.env.LLM_PROVIDER === 'local';
  return startService({
    ...passedOnLlmSettings(),
    ...(local ? { LLM_PROVIDER: 'local', LOCAL_MODEL_URL: proxy.baseUrl, ...(process.env.MODEL_API_KEY ? { MODEL_API_KEY: process.env.MODEL_API_KEY } : {}) } : { LLM_PROVIDER: target.provider }),
    LLM_BASE_URL: proxy.baseUrl,
    LLM_MODEL: target.model,
    LLM_API_KEY: target.apiKey,
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
}

/** The checkout's short commit, with a + when tracked files differ from it. */
function commitOf(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? '+' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** Every task of the selection, `REPEAT` times over (all tasks, then all again), CONCURRENCY at a time. */
async function runAll(ctx: RunContext, tasks: EvalTask[], proxy: ModelProxy): Promise<TaskResult[]> {
  const queue = Array.from({ length: REPEAT }, (_, i) => tasks.map((task) => ({ task, repeat: i + 1 }))).flat();
  const results: TaskResult[] = [];
  const lane = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) results.push(await runOne(ctx, next.task, next.repeat, proxy));
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, lane));
  const order = (r: TaskResult) => (r.repeat - 1) * tasks.length + tasks.findIndex((t) => t.id === r.id);
  return results.sort((a, b) => order(a) - order(b));
}

async function runOne(ctx: RunContext, task: EvalTask, repeat: number, proxy: ModelProxy): Promise<TaskResult> {
  log(`${task.id} (${task.split}, ${task.tier}${REPEAT > 1 ? `, run ${repeat} of ${REPEAT}` : ''})…`);
  const runId = newRunId(task);
  running.add(runId);
  const run = await runEvalTask(ctx, task, { runId, ...(SCRIPTED ? { steps: task.scripted.right } : {}) }).finally(() => running.delete(runId));
  if (CONCURRENCY === 1) await proxy.idle();
  const result = taskResult(task, repeat, run, proxy.calls);
  log(`${task.id}: ${result.verdict}, ${result.steps} steps, ${(result.wallMs / 1000).toFixed(1)} s (model ${(result.modelMs / 1000).toFixed(1)} s), ${result.promptTokens} prompt tokens`);
  return result;
}

function buildReport(target: ModelTarget, run: { commit: string; startedAt: string }, results: TaskResult[]) {
  const { commit, startedAt } = run;
  return {
    model: { provider: target.provider, name: target.name, baseUrl: target.upstream, scripted: SCRIPTED },
    commit,
    startedAt,
    finishedAt: new Date().toISOString(),
    settings: { split: SPLIT, repeat: REPEAT, concurrency: CONCURRENCY, maxSteps: MAX_STEPS, taskTimeoutMs: TASK_TIMEOUT_MS, selected: process.env.EVAL_TASKS || 'all' },
    notes: {
      splits: 'tuning: the tasks the agent was tuned on; test: held-out tasks, run to report, never to tune. Every figure is of one split (splits.<split>).',
      passed: 'tasks passed per repeat (perRepeat), their mean over the repeats and the lowest and highest repeat; passRate the same as a fraction of the tasks',
      steps: 'the agent steps the task recording lists (stepsFrom: recording); the model calls when it could not be read',
      time: 'wallMs runs from submitting the task to seeing it end; modelMs is the time in model calls (measured at a proxy), serviceMs the rest. secondsPerStep: median over the runs of each run\'s time per step, mean over all steps',
      tokens: 'per step over all steps; reused: prompt tokens the model server had already evaluated (cached)',
      unstable: 'tasks that passed in one repeat and failed in another, with the reason of each failure',
    },
    splits: summariseSplits(results, REPEAT),
    tasks: results,
  };
}

it(
  'runs the evaluation tasks',
  async () => {
    const tasks = selectTasks(process.env.EVAL_TASKS, SPLIT);
    const startedAt = new Date().toISOString();
    // the code measured is the code at the start (the checkout may move on during a long run)
    const commit = commitOf();
    let sites: SiteServer | undefined;
    let scripted: ScriptedModel | undefined;
    let proxy: ModelProxy | undefined;
    let service: ServiceProcess | undefined;
    try {
      sites = await startSiteServer();
      if (SCRIPTED) scripted = await startScriptedModel();
      const target = modelTarget(scripted);
      proxy = await startModelProxy({ upstream: target.upstream, provider: target.provider, trace: process.env.EVAL_TRACE ?? path.join(path.dirname(OUT), 'calls.jsonl'), tagOf: (body) => [...running].find((id) => body.includes(id)) });
      log(`model ${target.name} (${target.provider}) at ${target.upstream}; split ${SPLIT}: ${tasks.length} task(s) × ${REPEAT}, ${CONCURRENCY} at once; sites on ${sites.url}`);
      service = await startEvalService(target, proxy, sites);
      const { apiKey: key } = await createUser({ balance: 1000 });
      const ctx: RunContext = { baseUrl: service.baseUrl, apiKey: () => key, sites, timeoutMs: TASK_TIMEOUT_MS, scriptedModelUrl: scripted?.url, log };

      const results = await runAll(ctx, tasks, proxy);
      const report = buildReport(target, { commit, startedAt }, results);
      fs.mkdirSync(path.dirname(OUT), { recursive: true });
      fs.writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
      log(`passed ${results.filter((r) => r.verdict === 'pass').length} of ${results.length} runs; report in ${OUT}`);
      // tasks failing is a result; every task failing to run at all is a broken run
      if (results.length && results.every((r) => r.verdict === 'error')) throw new Error(`every task errored; first: ${results[0].reason}`);
      if (!SCRIPTED && process.env.EVAL_DOCS_ROW !== '0') {
        appendResultRows(DOCS, resultRows(report));
        log(`results row added to ${DOCS}`);
      }
    } finally {
      await service?.stop();
      await proxy?.close();
      await scripted?.close();
      await sites?.close();
    }
  },
  48 * 3_600_000,
);
