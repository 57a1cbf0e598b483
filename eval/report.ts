import type { ModelCall } from './model-proxy';
import type { TaskRun } from './run-task';
import { SPLITS, TIERS, type EvalTask, type Split, type Tier } from './tasks';

export interface TaskResult {
  id: string;
  tier: Tier;
  split: Split;
  /** Which repetition (EVAL_REPEAT) this is, from 1. */
  repeat: number;
  /** pass / fail: the site or the answer proved it or not; error: the run itself broke. */
  verdict: 'pass' | 'fail' | 'error';
  reason: string;
  status: string;
  code: string | null;
  /** The agent's steps: from the task's recording, or the model calls when it could not be read. */
  steps: number;
  stepsFrom: 'recording' | 'modelCalls';
  modelCalls: number;
  /** How long each of the run's model calls took, in order. */
  callMs: number[];
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  guardrails: number;
  wallMs: number;
  /** wallMs = modelMs + serviceMs: time in model calls, and everything else (browser, service, queues). */
  modelMs: number;
  serviceMs: number;
  perStep: { modelMs: number; serviceMs: number };
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * The model calls of the run (those the proxy tagged with its run id; untagged, those that
 * started while it ran), each counted up to the task's end.
 */
export function taskResult(task: EvalTask, repeat: number, run: TaskRun, allCalls: ModelCall[]): TaskResult {
  const calls = allCalls.filter((c) => (c.runId === undefined || c.runId === run.runId) && c.startedAt >= run.startedAt && c.startedAt <= run.endedAt);
  const modelMs = Math.round(calls.reduce((sum, c) => sum + Math.max(0, Math.min(c.endedAt, run.endedAt) - c.startedAt), 0));
  const serviceMs = run.wallMs - modelMs;
  const steps = run.recordedSteps ?? calls.length;
  const per = Math.max(steps, 1);
  return {
    id: task.id,
    tier: task.tier,
    split: task.split,
    repeat,
    verdict: run.error ? 'error' : run.verdict.pass ? 'pass' : 'fail',
    reason: run.error ?? run.verdict.reason,
    status: run.outcome.status,
    code: run.outcome.code ?? null,
    steps,
    stepsFrom: run.recordedSteps === null ? 'modelCalls' : 'recording',
    modelCalls: calls.length,
    callMs: calls.map((c) => Math.round(c.ms)),
    promptTokens: calls.reduce((s, c) => s + c.promptTokens, 0),
    completionTokens: calls.reduce((s, c) => s + c.completionTokens, 0),
    cachedPromptTokens: calls.reduce((s, c) => s + c.cachedPromptTokens, 0),
    guardrails: run.outcome.guardrails,
    wallMs: run.wallMs,
    modelMs,
    serviceMs,
    perStep: { modelMs: round(modelMs / per), serviceMs: round(serviceMs / per) },
  };
}


/** The mean of a figure over the repeats, with the lowest and highest repeat. */
export interface Spread {
  mean: number;
  min: number;
  max: number;
}

export interface MedianMean {
  median: number;
  mean: number;
}

/** The figures of one set of runs (a tier of a split, or a whole split), over all its repeats. */
export interface Aggregate {
  /** Distinct tasks, and the repeats they ran (a task runs once per repeat). */
  tasks: number;
  repeats: number;
  runs: number;
  /** Tasks passed in each repeat (perRepeat[0] is repeat 1); mean, lowest and highest of them. */
  passed: Spread & { perRepeat: number[] };
  /** passed / tasks, per repeat: mean, lowest, highest. */
  passRate: Spread;
  failed: number;
  /** Runs that broke (not the agent's failure). */
  errors: number;
  stepsPerTask: number;
  wallSecondsPerTask: number;
  /**
   * Seconds per step: the median is over the runs (each run's time divided by its steps), the
   * mean over all steps (a long run weighs more).
   */
  secondsPerStep: { model: MedianMean; service: MedianMean };
  /** Seconds per model call, over every call. */
  modelCallSeconds: MedianMean;
  modelCallsPerStep: number;
  /** Mean per step over all steps; reused: prompt tokens the model server had already evaluated (cached). */
  tokensPerStep: { prompt: number; reused: number; completion: number };
}

/** A task that passed in one repeat and failed in another, with the reason of each failure. */
export interface Unstable {
  id: string;
  tier: Tier;
  split: Split;
  passedIn: number[];
  failures: { repeat: number; verdict: TaskResult['verdict']; reason: string }[];
}

export interface SplitSummary {
  split: Split;
  tiers: Record<Tier, Aggregate>;
  total: Aggregate;
  unstable: Unstable[];
  /** Tasks that failed in every repeat. */
  neverPassed: string[];
}

export function median(values: number[]): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function spread(values: number[], digits = 2): Spread {
  if (!values.length) return { mean: 0, min: 0, max: 0 };
  return { mean: round(values.reduce((s, v) => s + v, 0) / values.length, digits), min: Math.min(...values), max: Math.max(...values) };
}

/** Tasks passed in each repeat 1..repeats. */
function passedPerRepeat(results: TaskResult[], repeats: number): number[] {
  return Array.from({ length: repeats }, (_, i) => results.filter((r) => r.repeat === i + 1 && r.verdict === 'pass').length);
}

function timePerStep(results: TaskResult[]): Aggregate['secondsPerStep'] {
  const stepped = results.filter((r) => r.steps > 0);
  const steps = Math.max(stepped.reduce((s, r) => s + r.steps, 0), 1);
  const of = (f: (r: TaskResult) => number): MedianMean => ({
    median: round(median(stepped.map((r) => f(r) / r.steps)) / 1000, 2),
    mean: round(stepped.reduce((s, r) => s + f(r), 0) / steps / 1000, 2),
  });
  return { model: of((r) => r.modelMs), service: of((r) => r.serviceMs) };
}

/** The figures of `results`, which ran `repeats` times. */
export function aggregate(results: TaskResult[], repeats: number): Aggregate {
  const sum = (f: (r: TaskResult) => number) => results.reduce((s, r) => s + f(r), 0);
  const tasks = new Set(results.map((r) => r.id)).size;
  const runs = results.length;
  const steps = Math.max(sum((r) => r.steps), 1);
  const perRepeat = passedPerRepeat(results, repeats);
  const calls = results.flatMap((r) => r.callMs);
  return {
    tasks,
    repeats,
    runs,
    passed: { ...spread(perRepeat), perRepeat },
    passRate: spread(perRepeat.map((p) => (tasks ? p / tasks : 0)), 3),
    failed: results.filter((r) => r.verdict === 'fail').length,
    errors: results.filter((r) => r.verdict === 'error').length,
    stepsPerTask: runs ? round(sum((r) => r.steps) / runs) : 0,
    wallSecondsPerTask: runs ? round(sum((r) => r.wallMs) / runs / 1000) : 0,
    secondsPerStep: timePerStep(results),
    modelCallSeconds: { median: round(median(calls) / 1000, 2), mean: calls.length ? round(calls.reduce((s, v) => s + v, 0) / calls.length / 1000, 2) : 0 },
    modelCallsPerStep: round(sum((r) => r.modelCalls) / steps, 2),
    tokensPerStep: {
      prompt: Math.round(sum((r) => r.promptTokens) / steps),
      reused: Math.round(sum((r) => r.cachedPromptTokens) / steps),
      completion: Math.round(sum((r) => r.completionTokens) / steps),
    },
  };
}

/** Tasks with a pass in one repeat and a failure (or error) in another. */
export function unstableTasks(results: TaskResult[]): Unstable[] {
  const ids = [...new Set(results.map((r) => r.id))];
  return ids.flatMap((id) => {
    const runs = results.filter((r) => r.id === id).sort((a, b) => a.repeat - b.repeat);
    const passes = runs.filter((r) => r.verdict === 'pass');
    if (!passes.length || passes.length === runs.length) return [];
    const failures = runs.filter((r) => r.verdict !== 'pass').map((r) => ({ repeat: r.repeat, verdict: r.verdict, reason: r.reason }));
    return [{ id, tier: runs[0].tier, split: runs[0].split, passedIn: passes.map((r) => r.repeat), failures }];
  });
}

/** Per split that ran: each tier's figures, the split's total, its unstable and never-passed tasks. */
export function summariseSplits(results: TaskResult[], repeats: number): Partial<Record<Split, SplitSummary>> {
  const out: Partial<Record<Split, SplitSummary>> = {};
  for (const split of SPLITS) {
    const mine = results.filter((r) => r.split === split);
    if (!mine.length) continue;
    const tiers = Object.fromEntries(TIERS.map((t) => [t, aggregate(mine.filter((r) => r.tier === t), repeats)])) as Record<Tier, Aggregate>;
    const ids = [...new Set(mine.map((r) => r.id))];
    const neverPassed = ids.filter((id) => !mine.some((r) => r.id === id && r.verdict === 'pass'));
    out[split] = { split, tiers, total: aggregate(mine, repeats), unstable: unstableTasks(mine), neverPassed };
  }
  return out;
}
