/**
 * Every evaluation task's verdict (eval/tasks.ts), through the real stack with the scripted
 * model: an agent doing the task right passes it, and a plausible wrong run fails it (other
 * actions run in the browser; a wrong final answer is judged on the right run's site records).
 */
import fs from 'node:fs';
import path from 'node:path';
import { runEvalTask, type RunContext, type TaskRun } from '../../eval/run-task';
import { SITES_DIR, startSiteServer, type SiteServer } from '../../eval/site-server';
import { parseSplit, selectTasks, TASKS, TIERS } from '../../eval/tasks';
import { allowedPort } from '../support/ports';
import { createUser } from '../support/service';

/** Rate-limited calls (run-task, send-message, upload) a user makes here: under the 10 per minute limit. */
const CALLS_PER_USER = 8;
/** Runs at once (EVAL_VERDICTS_CONCURRENCY to measure another). */
const CONCURRENCY = Number(process.env.EVAL_VERDICTS_CONCURRENCY ?? 3);

let sites: SiteServer | undefined;
let ready: Promise<RunContext> | undefined;

/** One site server and a pool of users, made once by whichever test comes first. */
function setup(): Promise<RunContext> {
  ready ??= (async () => {
    sites = await startSiteServer({ port: allowedPort() });
    let current: Promise<string> | undefined;
    let used = CALLS_PER_USER;
    return {
      baseUrl: process.env.TEST_API_URL!,
      scriptedModelUrl: process.env.TEST_LLM_BASE_URL!,
      sites,
      timeoutMs: 60_000,
      apiKey: (calls: number) => {
        if (used + calls > CALLS_PER_USER || !current) {
          current = createUser({ balance: 100 }).then((u) => u.apiKey);
          used = 0;
        }
        used += calls;
        return current;
      },
    };
  })();
  return ready;
}

let running = 0;
const waiting: (() => void)[] = [];
async function limited<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= CONCURRENCY) await new Promise<void>((r) => waiting.push(r));
  running += 1;
  try {
    return await fn();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

const summary = (run: TaskRun) => ({ error: run.error, status: run.outcome.status, code: run.outcome.code, verdict: run.verdict });

afterAll(async () => {
  await sites?.close();
});

describe('eval task set', () => {
  it('has 8 tuning tasks and at least 4 test tasks per tier, unique ids and sites of their own per split (dev and test apart from the others), and EVAL_SPLIT / EVAL_TASKS select', () => {
    for (const tier of TIERS) {
      expect({ tier, tuning: TASKS.filter((t) => t.tier === tier && t.split === 'tuning').length }).toEqual({ tier, tuning: 8 });
      expect({ tier, test: TASKS.filter((t) => t.tier === tier && t.split === 'test').length >= 4 }).toEqual({ tier, test: true });
    }
    expect(new Set(TASKS.map((t) => t.id)).size).toBe(TASKS.length);
    for (const t of TASKS) expect({ id: t.id, start: fs.existsSync(path.join(SITES_DIR, t.site, t.start ?? 'index.html')) }).toEqual({ id: t.id, start: true });
    const sitesOf = (split: string) => new Set(TASKS.filter((t) => t.split === split).map((t) => t.site));
    expect([...sitesOf('test')].filter((s) => sitesOf('tuning').has(s) || sitesOf('dev').has(s))).toEqual([]);
    expect([...sitesOf('dev')].filter((s) => sitesOf('tuning').has(s))).toEqual([]);
    expect(selectTasks('', 'dev').map((t) => t.id)).toEqual(TASKS.filter((t) => t.split === 'dev').map((t) => t.id));

    expect(selectTasks('').map((t) => t.split)).toEqual(TASKS.filter((t) => t.split === 'tuning').map(() => 'tuning'));
    expect(selectTasks('', 'test').length).toBe(TASKS.filter((t) => t.split === 'test').length);
    expect(selectTasks('', 'all').length).toBe(TASKS.length);
    expect(selectTasks('hard, easy-radio').map((t) => t.id)).toEqual(['easy-radio', ...TASKS.filter((t) => t.tier === 'hard' && t.split === 'tuning').map((t) => t.id)]);
    expect(selectTasks('easy, test-hard-combobox', 'test').map((t) => t.id)).toEqual([...TASKS.filter((t) => t.tier === 'easy' && t.split === 'test').map((t) => t.id), 'test-hard-combobox']);
    expect(() => selectTasks('easy,nonsense')).toThrow('EVAL_TASKS names no task or tier: nonsense');
    expect(parseSplit(undefined)).toBe('tuning');
    expect(() => parseSplit('held-out')).toThrow('EVAL_SPLIT must be tuning, dev, test or all');
  });
});

describe('eval verdicts', () => {
  for (const task of TASKS) {
    it.concurrent(
      `${task.id} (${task.split}, ${task.tier}): the right actions pass, a wrong run fails`,
      async () => {
        const ctx = await setup();
        // nothing done, no answer: never a pass
        expect(task.verdict({ status: 'failed', answer: null, records: [], guardrails: 0 }).pass).toBe(false);

        const right = await limited(() => runEvalTask(ctx, task, { steps: task.scripted.right }));
        expect(summary(right)).toMatchObject({ error: undefined, status: 'task_completed', verdict: { pass: true } });
        if (task.guardrailAnswer) expect(right.outcome.guardrails).toBe(1);

        const { wrong } = task.scripted;
        if (Array.isArray(wrong)) {
          const run = await limited(() => runEvalTask(ctx, task, { steps: wrong }));
          // the run went through; only what the site received tells it failed
          expect(summary(run)).toMatchObject({ error: undefined, status: 'task_completed', verdict: { pass: false } });
        } else {
          const verdict = task.verdict({ ...right.outcome, answer: wrong.answer });
          expect({ answer: wrong.answer, verdict }).toMatchObject({ verdict: { pass: false } });
        }
      },
      240_000,
    );
  }
});
