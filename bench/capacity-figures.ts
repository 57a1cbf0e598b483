/**
 * The figures of the capacity bench, from what the scripted model recorded: each step of a
 * task split into the model's time and the service's share, their percentiles, and the
 * highest number of sessions the stack sustained.
 */

/** One model request of a task as the model saw it: when it arrived and when it was answered (ms). */
export interface ModelCallTimes {
  at: number;
  answeredAt?: number;
}

/** A step between two model requests of one task: its wall time = the model's time + the service's share. */
export interface StepTimes {
  wallMs: number;
  modelMs: number;
  serviceMs: number;
}

/** Value at percentile `p` (nearest rank: the smallest value with at least p% of the values at or below it); null without values. */
export function percentile(xs: number[], p: number): number | null {
  if (!xs.length) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return Math.round(sorted[rank - 1] * 10) / 10;
}

export function summary(xs: number[]): { p50: number | null; p95: number | null; n: number } {
  return { p50: percentile(xs, 50), p95: percentile(xs, 95), n: xs.length };
}

/**
 * The steps of one task from its model requests in order: from one request to the next, the
 * model held the step until it answered, and the rest (acting, looking at the page, the
 * workflow's round trip) is the service's share. A request without its answer time counts
 * as answered after `delayMs`.
 */
export function taskSteps(calls: ModelCallTimes[], delayMs: number): StepTimes[] {
  const steps: StepTimes[] = [];
  for (let k = 1; k < calls.length; k++) {
    const wallMs = calls[k].at - calls[k - 1].at;
    const modelMs = Math.min(wallMs, (calls[k - 1].answeredAt ?? calls[k - 1].at + delayMs) - calls[k - 1].at);
    steps.push({ wallMs, modelMs, serviceMs: wallMs - modelMs });
  }
  return steps;
}

/** One level of the ramp as the `highest` rule reads it. */
export interface LevelOutcome {
  sessions: number;
  completed: number;
  serviceShareP95Ms: number | null;
}

/** Whether every task of the level completed and the service's share of a step stayed within `limitMs` at p95. */
export function levelPasses(level: LevelOutcome, limitMs: number): boolean {
  return level.completed === level.sessions && level.serviceShareP95Ms !== null && level.serviceShareP95Ms <= limitMs;
}

/** The highest number of sessions at which the level and every smaller one passed (0 if the smallest failed). */
export function highestSustained(levels: LevelOutcome[], limitMs: number): number {
  let highest = 0;
  for (const level of [...levels].sort((a, b) => a.sessions - b.sessions)) {
    if (!levelPasses(level, limitMs)) break;
    highest = level.sessions;
  }
  return highest;
}

/** CPU ms per step of each part of the stack, and across the stack. */
export function perStep(cpuMs: Record<string, number>, steps: number): { byPart: Record<string, number>; total: number } | null {
  if (steps <= 0) return null;
  const byPart = Object.fromEntries(Object.entries(cpuMs).map(([part, ms]) => [part, Math.round((ms / steps) * 10) / 10]));
  const total = Math.round((Object.values(cpuMs).reduce((x, y) => x + y, 0) / steps) * 10) / 10;
  return { byPart, total };
}
