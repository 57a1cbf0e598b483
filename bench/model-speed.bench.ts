/**
 * The local model's time per agent step, seen from the model's side of the wire: recorded
 * agent requests (whole chat-completions bodies, one JSON line each: an eval run with
 * EVAL_REQUESTS_OUT, or the committed sample) replayed over HTTP against the model role,
 * started afresh for each configuration. A call's wall time is split into the prompt (until
 * the first answer token), the answer's generation, and the rest (HTTP, grammar, queueing):
 * the three add up to it.
 *
 * Settings:
 * - BENCH_MODEL_REQUESTS: the requests file (bench/fixtures/model-requests.jsonl by default).
 * - BENCH_MODEL_CONFIGS: `name:VAR=value,VAR=value;name:...`, the model role's settings of each
 *   run (default: no predictor, then prompt lookup, then the draft model when
 *   BENCH_DRAFT_MODEL names a file).
 * - BENCH_MODEL_PARALLEL: tasks at once, e.g. `1,2,4` (default `1`): with N, N lanes each
 *   replay every conversation at once (the model role with N sequences), and steps per
 *   minute and seconds per step are reported for each N. Before the timed replay each
 *   sequence evaluates the prompts' shared start (system prompt and tools), as a worker
 *   has the model do when it starts.
 * - BENCH_MODEL_LIMIT: at most this many conversations (default 4).
 * Writes JSON to BENCH_MODEL_OUT (scripts/bench.sh prints it).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, ROOT } from '../test/support/service';
import { defaultModelPath } from '../src/config';

type Body = { messages: { role: string; content?: unknown }[]; [k: string]: unknown };
interface CallFigure {
  conversation: number;
  lane: number;
  step: number;
  wallMs: number;
  promptMs: number;
  generationMs: number;
  otherMs: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  validated: number;
  refuted: number;
  answer: string;
}

const MODEL = process.env.BENCH_MODEL ?? process.env.TEST_LOCAL_MODEL ?? defaultModelPath();
const REQUESTS = process.env.BENCH_MODEL_REQUESTS ?? path.join(ROOT, 'bench/fixtures/model-requests.jsonl');
const LIMIT = Number(process.env.BENCH_MODEL_LIMIT ?? 4);
const PARALLEL = (process.env.BENCH_MODEL_PARALLEL ?? '1').split(',').map(Number).filter((n) => n > 0);
const DRAFT = process.env.BENCH_DRAFT_MODEL ?? '';
const OUT = process.env.BENCH_MODEL_OUT ?? path.join(ROOT, '.data/bench-results/model-speed.json');

function configs(): { name: string; env: Record<string, string> }[] {
  const spec = process.env.BENCH_MODEL_CONFIGS ?? `plain:LLM_PREDICTOR=none;lookup:LLM_PREDICTOR=lookup${DRAFT && fs.existsSync(DRAFT) ? `;draft:LLM_PREDICTOR=draft,LLM_DRAFT_MODEL=${DRAFT}` : ''}`;
  return spec.split(';').filter(Boolean).map((part) => {
    const [name, vars = ''] = part.split(/:(.*)/s);
    return { name, env: Object.fromEntries(vars.split(',').filter(Boolean).map((kv) => kv.split(/=(.*)/s).slice(0, 2) as [string, string])) };
  });
}

/** The requests grouped by conversation (the task's text), in the order they were made. */
function conversations(): Body[][] {
  const groups = new Map<string, Body[]>();
  for (const line of fs.readFileSync(REQUESTS, 'utf8').split('\n').filter(Boolean)) {
    const body = JSON.parse(line) as Body;
    const task = JSON.stringify(body.messages.find((m) => m.role === 'user')?.content ?? '');
    groups.set(task, [...(groups.get(task) ?? []), body]);
  }
  return [...groups.values()].slice(0, LIMIT);
}

async function startModel(env: Record<string, string>, sequences: number): Promise<{ proc: ChildProcess; url: string; output: () => string }> {
  const port = await freePort();
  let out = '';
  const proc = spawn(process.execPath, [path.join(ROOT, 'dist/main.js')], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ROLE: 'model', LLM_PROVIDER: 'local', LLM_MODEL: MODEL, MODEL_PORT: String(port), LLM_SEQUENCES: String(Math.max(2, sequences)), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      const failed = proc.exitCode !== null;
      if (!failed && !out.includes('"msg":"ready"')) return;
      clearInterval(timer);
      if (failed) reject(new Error(`the model role exited:\n${out.slice(-2000)}`));
      else resolve();
    }, 200);
  });
  return { proc, url: `http://127.0.0.1:${port}/v1/chat/completions`, output: () => out };
}

/** A POST without a deadline: a call on a busy machine may take minutes (fetch gives up after 5). */
function post(url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function call(url: string, body: Body, conversation: number, lane: number, step: number): Promise<CallFigure> {
  const t0 = performance.now();
  const res = await post(url, JSON.stringify(body));
  const json = JSON.parse(res.text) as any;
  const wallMs = performance.now() - t0;
  if (res.status !== 200) throw new Error(`model answered ${res.status}: ${res.text}`);
  const t = json.timings ?? {};
  const u = json.usage ?? {};
  const m = json.choices?.[0]?.message ?? {};
  return {
    conversation,
    lane,
    step,
    wallMs,
    promptMs: t.prompt_ms ?? 0,
    generationMs: t.generation_ms ?? 0,
    otherMs: wallMs - (t.prompt_ms ?? 0) - (t.generation_ms ?? 0),
    promptTokens: u.prompt_tokens ?? 0,
    cachedTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
    completionTokens: u.completion_tokens ?? 0,
    validated: t.predicted_validated ?? 0,
    refuted: t.predicted_refuted ?? 0,
    answer: JSON.stringify(m.tool_calls?.map((c: any) => c.function) ?? m.content ?? ''),
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : 0;
};
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const r = (n: number, d = 0) => Math.round(n * 10 ** d) / 10 ** d;

function summarise(calls: CallFigure[], wallMs: number) {
  const per = (f: (c: CallFigure) => number) => r(mean(calls.map(f)));
  return {
    calls: calls.length,
    stepsPerMinute: r((calls.length / wallMs) * 60_000, 2),
    secondsPerStep: { median: r(median(calls.map((c) => c.wallMs)) / 1000, 2), mean: r(mean(calls.map((c) => c.wallMs)) / 1000, 2) },
    meanMs: { wall: per((c) => c.wallMs), prompt: per((c) => c.promptMs), generation: per((c) => c.generationMs), other: per((c) => c.otherMs) },
    tokensPerStep: { prompt: per((c) => c.promptTokens), reused: per((c) => c.cachedTokens), completion: per((c) => c.completionTokens) },
    generationMsPerToken: r(mean(calls.map((c) => c.generationMs / Math.max(1, c.completionTokens - 1))), 1),
    promptMsPerNewToken: r(mean(calls.map((c) => c.promptMs / Math.max(1, c.promptTokens - c.cachedTokens))), 1),
    predictions: { validated: calls.reduce((a, c) => a + c.validated, 0), refuted: calls.reduce((a, c) => a + c.refuted, 0) },
  };
}

/**
 * Replays the conversations in `lanes` at once. With one lane they are replayed one after
 * another; with more, every lane replays all of them, each lane starting at another one, so
 * `lanes` tasks are at the model for the whole run. A lane's task text is marked with its lane,
 * so no lane reuses what another evaluated beyond the system prompt and tools (as two
 * different tasks would not).
 */
async function replay(url: string, convs: Body[][], lanes: number): Promise<{ calls: CallFigure[]; wallMs: number }> {
  const calls: CallFigure[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let k = 0; k < convs.length; k++) {
        const i = (lane + k) % convs.length;
        for (const [step, body] of convs[i].entries()) calls.push(await call(url, lanes > 1 ? markedForLane(body, lane) : body, i, lane, step));
      }
    }),
  );
  return { calls, wallMs: performance.now() - t0 };
}

/** The request with its first user message marked with the lane. */
function markedForLane(body: Body, lane: number): Body {
  let marked = false;
  const messages = body.messages.map((m) => {
    if (marked || m.role !== 'user' || typeof m.content !== 'string') return m;
    marked = true;
    return { ...m, content: `(lane ${lane + 1}) ${m.content}` };
  });
  return { ...body, messages };
}

it(
  "measures the local model's time per step for each configuration",
  async () => {
    if (!fs.existsSync(MODEL)) {
      process.stderr.write(`model-speed bench skipped: no model at ${MODEL}\n`);
      fs.mkdirSync(path.dirname(OUT), { recursive: true });
      fs.writeFileSync(OUT, `${JSON.stringify({ skipped: `no model at ${MODEL}` })}\n`);
      return;
    }
    const convs = conversations();
    const results: Record<string, unknown>[] = [];
    let reference: string[] | undefined;
    for (const config of configs()) {
      for (const lanes of PARALLEL) {
        const model = await startModel(config.env, lanes);
        try {
          // Each sequence evaluates the start every prompt shares first, as a worker has it do when it starts.
          await Promise.all(Array.from({ length: lanes }, (_, lane) => post(model.url, JSON.stringify({ ...markedForLane(convs[0][0], lane), max_tokens: 1 }))));
          const { calls, wallMs } = await replay(model.url, convs, lanes);
          // the first lane's answers, in the conversations' order, against the first run's
          const ordered = calls.filter((c) => c.lane === 0).sort((a, b) => a.conversation - b.conversation || a.step - b.step).map((c) => c.answer);
          reference ??= ordered;
          const sameAnswers = ordered.filter((a, i) => a === reference![i]).length;
          const summary = { config: config.name, env: config.env, lanes, ...summarise(calls, wallMs), answersAsFirstConfig: `${sameAnswers}/${ordered.length}` };
          process.stderr.write(`${JSON.stringify(summary)}\n`);
          // each call of the first lane, for reading where a configuration gains or loses
          const perCall = calls.filter((c) => c.lane === 0).sort((a, b) => a.conversation - b.conversation || a.step - b.step).map((c) => ({ conversation: c.conversation, step: c.step, wallMs: Math.round(c.wallMs), completionTokens: c.completionTokens, validated: c.validated, refuted: c.refuted, answer: c.answer.slice(0, 400) }));
          results.push({ ...summary, perCall });
        } finally {
          model.proc.kill('SIGTERM');
          await new Promise((res) => model.proc.once('exit', res));
        }
      }
    }
    const report = { model: path.basename(MODEL), requests: path.relative(ROOT, REQUESTS), conversations: convs.length, calls: convs.reduce((a, c) => a + c.length, 0), results, at: new Date().toISOString() };
    fs.mkdirSync(path.dirname(OUT), { recursive: true });
    fs.writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
  },
  4 * 3_600_000,
);
