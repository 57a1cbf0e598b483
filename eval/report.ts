import type { ModelCall } from './model-proxy';
import type { TaskRun } from './run-task';
import { TIERS, type EvalTask, type Tier } from './tasks';

export interface TaskResult {
  id: string;
  tier: Tier;
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

export interface Summary {
  tasks: number;
  passed: number;
  failed: number;
  errors: number;
  successRate: number;
  avgSteps: number;
  avgWallSeconds: number;
  secondsPerStep: number;
  modelSecondsPerStep: number;
  serviceSecondsPerStep: number;
  modelCallsPerStep: number;
  promptTokensPerStep: number;
  completionTokensPerStep: number;
  cachedPromptTokensPerStep: number;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The model calls that started while the task ran, each counted up to the task's end. */
export function taskResult(task: EvalTask, repeat: number, run: TaskRun, allCalls: ModelCall[]): TaskResult {
  const calls = allCalls.filter((c) => c.startedAt >= run.startedAt && c.startedAt <= run.endedAt);
  const modelMs = Math.round(calls.reduce((sum, c) => sum + Math.max(0, Math.min(c.endedAt, run.endedAt) - c.startedAt), 0));
  const serviceMs = run.wallMs - modelMs;
  const steps = run.recordedSteps ?? calls.length;
  const per = Math.max(steps, 1);
  return {
    id: task.id,
    tier: task.tier,
    repeat,
    verdict: run.error ? 'error' : run.verdict.pass ? 'pass' : 'fail',
    reason: run.error ?? run.verdict.reason,
    status: run.outcome.status,
    code: run.outcome.code ?? null,
    steps,
    stepsFrom: run.recordedSteps === null ? 'modelCalls' : 'recording',
    modelCalls: calls.length,
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

/** Totals of a set of results; rates per step are over all their steps (a long task weighs more). */
export function summarise(results: TaskResult[]): Summary {
  const n = results.length;
  const sum = (f: (r: TaskResult) => number) => results.reduce((s, r) => s + f(r), 0);
  const steps = Math.max(sum((r) => r.steps), 1);
  const passed = results.filter((r) => r.verdict === 'pass').length;
  return {
    tasks: n,
    passed,
    failed: results.filter((r) => r.verdict === 'fail').length,
    errors: results.filter((r) => r.verdict === 'error').length,
    successRate: n ? round(passed / n, 3) : 0,
    avgSteps: n ? round(sum((r) => r.steps) / n) : 0,
    avgWallSeconds: n ? round(sum((r) => r.wallMs) / n / 1000) : 0,
    secondsPerStep: round(sum((r) => r.wallMs) / steps / 1000, 2),
    modelSecondsPerStep: round(sum((r) => r.modelMs) / steps / 1000, 2),
    serviceSecondsPerStep: round(sum((r) => r.serviceMs) / steps / 1000, 2),
    modelCallsPerStep: round(sum((r) => r.modelCalls) / steps, 2),
    promptTokensPerStep: Math.round(sum((r) => r.promptTokens) / steps),
    completionTokensPerStep: Math.round(sum((r) => r.completionTokens) / steps),
    cachedPromptTokensPerStep: Math.round(sum((r) => r.cachedPromptTokens) / steps),
  };
}

export function summariseTiers(results: TaskResult[]): Record<Tier, Summary> {
  return Object.fromEntries(TIERS.map((t) => [t, summarise(results.filter((r) => r.tier === t))])) as Record<Tier, Summary>;
}
