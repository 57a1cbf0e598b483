import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ModelCall } from '../../eval/model-proxy';
import { aggregate, median, summariseSplits, taskResult, unstableTasks, type TaskResult } from '../../eval/report';
import type { TaskRun } from '../../eval/run-task';
import type { EvalTask } from '../../eval/tasks';
import { appendResultRows, passCell, resultRows, TABLE_HEADER, TABLE_MARKER, type ReportForTable } from '../../eval/results-table';

/** A task run as the eval records it; time in ms, tokens as the proxy counted them. */
function run(id: string, repeat: number, verdict: TaskResult['verdict'], over: Partial<TaskResult> = {}): TaskResult {
  const tier = id.startsWith('easy') ? 'easy' : id.startsWith('medium') ? 'medium' : 'hard';
  return {
    id,
    tier,
    split: 'tuning',
    repeat,
    verdict,
    reason: verdict === 'pass' ? 'ok' : `${id} failed in run ${repeat}`,
    status: 'task_completed',
    code: null,
    steps: 4,
    stepsFrom: 'recording',
    modelCalls: 4,
    callMs: [2000, 2000, 2000, 2000],
    promptTokens: 4000,
    completionTokens: 200,
    cachedPromptTokens: 3000,
    guardrails: 0,
    wallMs: 9000,
    modelMs: 8000,
    serviceMs: 1000,
    perStep: { modelMs: 2000, serviceMs: 250 },
    ...over,
  };
}

describe('eval report: figures over repeats', () => {
  // three easy tasks, three repeats: a passes always, b in repeats 1 and 3, c never
  const results = [1, 2, 3].flatMap((r) => [run('easy-a', r, 'pass'), run('easy-b', r, r === 2 ? 'fail' : 'pass'), run('easy-c', r, r === 3 ? 'error' : 'fail')]);

  it('gives the tasks passed per repeat, their mean, lowest and highest, and the pass rate alike', () => {
    const a = aggregate(results, 3);
    expect(a.passed).toEqual({ perRepeat: [2, 1, 2], mean: 1.67, min: 1, max: 2 });
    expect(a.passRate).toEqual({ mean: 0.556, min: 1 / 3, max: 2 / 3 });
    expect({ tasks: a.tasks, repeats: a.repeats, runs: a.runs, failed: a.failed, errors: a.errors }).toEqual({ tasks: 3, repeats: 3, runs: 9, failed: 3, errors: 1 });
  });

  it('counts a repeat where nothing passed as 0, not as missing', () => {
    expect(aggregate([run('easy-a', 1, 'pass'), run('easy-a', 2, 'fail')], 2).passed).toEqual({ perRepeat: [1, 0], mean: 0.5, min: 0, max: 1 });
  });

  it('gives seconds per step as the median over runs and the mean over steps, model and service apart, and tokens per step', () => {
    const long = run('hard-x', 1, 'pass', { steps: 10, modelMs: 50_000, serviceMs: 5000, wallMs: 55_000, callMs: Array(10).fill(5000), modelCalls: 10, promptTokens: 10_000, cachedPromptTokens: 9000, completionTokens: 500 });
    const a = aggregate([run('hard-y', 1, 'pass'), run('hard-z', 1, 'pass'), long], 1);
    // per run: 2, 2, 5 s of model per step → median 2; all steps: 66 s / 18 steps
    expect(a.secondsPerStep).toEqual({ model: { median: 2, mean: 3.67 }, service: { median: 0.25, mean: 0.39 } });
    // calls: 8 of 2 s and 10 of 5 s
    expect(a.modelCallSeconds).toEqual({ median: 5, mean: 3.67 });
    expect(a.tokensPerStep).toEqual({ prompt: 1000, reused: 833, completion: 50 });
    expect(a.stepsPerTask).toBe(6);
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });

  it('lists a task that passed in one repeat and failed in another as unstable, with the reason of each failure', () => {
    expect(unstableTasks(results)).toEqual([{ id: 'easy-b', tier: 'easy', split: 'tuning', passedIn: [1, 3], failures: [{ repeat: 2, verdict: 'fail', reason: 'easy-b failed in run 2' }] }]);
    const split = summariseSplits(results, 3).tuning!;
    expect(split.neverPassed).toEqual(['easy-c']);
    expect(split.tiers.medium.tasks).toBe(0);
    expect(split.total.passed.perRepeat).toEqual([2, 1, 2]);
  });

  it('summarises each split apart and leaves out a split that did not run', () => {
    const mixed = [run('easy-a', 1, 'pass'), { ...run('easy-t', 1, 'fail'), split: 'test' as const }];
    const s = summariseSplits(mixed, 1);
    expect({ tuning: s.tuning?.total.passed.perRepeat, test: s.test?.total.passed.perRepeat }).toEqual({ tuning: [1], test: [0] });
    expect(Object.keys(summariseSplits([run('easy-a', 1, 'pass')], 1))).toEqual(['tuning']);
  });
});

describe('eval report: the results row of docs/eval.md', () => {
  const results = [1, 2, 3].flatMap((r) => [run('easy-a', r, 'pass'), run('easy-b', r, r === 2 ? 'fail' : 'pass'), run('medium-a', r, 'fail'), run('hard-a', r, 'pass')]);
  const report: ReportForTable = {
    model: { name: 'qwen2.5-coder-1.5b-instruct', scripted: false },
    startedAt: '2026-11-28T06:10:42.123Z',
    commit: 'abc1234',
    settings: { repeat: 3, split: 'tuning', selected: 'all' },
    splits: summariseSplits(results, 3),
  };

  it('has the date, commit, model, split, repeats, per tier mean [lowest–highest], seconds per step and tokens', () => {
    expect(resultRows(report)).toEqual([
      '| 2026-11-28 06:10 | abc1234 | qwen2.5-coder-1.5b-instruct | tuning | 3 | 1.7/2 [1–2] | 0/1 [0–0] | 1/1 [1–1] | 2.7/4 [2–3] | 2.00 + 0.25 (2.00 + 0.25) | 1,000 (750) / 50 |',
    ]);
    expect(passCell(aggregate([run('easy-a', 1, 'pass'), run('easy-b', 1, 'fail')], 1))).toBe('1/2');
    expect(passCell(aggregate([], 1))).toBe('–');
  });

  it('names a partial selection in the split column', () => {
    expect(resultRows({ ...report, settings: { ...report.settings, selected: 'easy,hard-modal' } })[0]).toContain('| tuning (only easy, hard-modal) |');
  });

  it('adds rows at the end of the table under the marker, keeping what follows it, and makes the table when missing', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eval-table-'));
    const file = path.join(dir, 'eval.md');
    fs.writeFileSync(file, `# Eval\n\n${TABLE_MARKER}\n${TABLE_HEADER.join('\n')}\n| row 1 |\n\nNotes after the table.\n`);
    appendResultRows(file, ['| row 2 |', '| row 3 |']);
    expect(fs.readFileSync(file, 'utf8')).toBe(`# Eval\n\n${TABLE_MARKER}\n${TABLE_HEADER.join('\n')}\n| row 1 |\n| row 2 |\n| row 3 |\n\nNotes after the table.\n`);

    const bare = path.join(dir, 'bare.md');
    fs.writeFileSync(bare, '# Eval');
    appendResultRows(bare, ['| row 1 |']);
    expect(fs.readFileSync(bare, 'utf8')).toBe(`# Eval\n\n${TABLE_MARKER}\n${TABLE_HEADER.join('\n')}\n| row 1 |\n`);
    fs.rmSync(dir, { recursive: true });
  });
});

describe('a run’s model calls', () => {
  const task = { id: 'easy-a', tier: 'easy', split: 'tuning' } as unknown as EvalTask;
  const call = (runId: string | undefined, startedAt: number): ModelCall => ({ path: '/chat/completions', startedAt, endedAt: startedAt + 1000, ms: 1000, status: 200, promptTokens: 100, completionTokens: 10, cachedPromptTokens: 50, runId });
  const taskRun = { runId: 'easy-a-1', outcome: { status: 'task_completed', guardrails: 0 }, verdict: { pass: true, reason: 'ok' }, wallMs: 10_000, startedAt: 0, endedAt: 10_000, recordedSteps: 2 } as unknown as TaskRun;

  it('are those tagged with its run id when runs overlap, else those that started while it ran', () => {
    const tagged = taskResult(task, 1, taskRun, [call('easy-a-1', 100), call('easy-b-7', 200), call('easy-a-1', 3000), call('easy-a-1', 20_000)]);
    expect([tagged.modelCalls, tagged.modelMs, tagged.promptTokens]).toEqual([2, 2000, 200]);
    const untagged = taskResult(task, 1, taskRun, [call(undefined, 100), call(undefined, 9500), call(undefined, 12_000)]);
    expect([untagged.modelCalls, untagged.modelMs]).toEqual([2, 1500]);
  });
});
