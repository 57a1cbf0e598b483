/**
 * Histograms of a Prometheus text exposition, summed over their label sets: what a bench reads
 * from a worker's /metrics before and after a run, to tell where a step's time went (the
 * Temporal SDK's queue waits and task executions, the worker's own step timing).
 */

/** Per histogram name (without `_sum`/`_count`): the sum of its observations and their count. */
export type Histograms = Record<string, { sum: number; count: number }>;

/** Labels that split a histogram in what parseHistograms returns (as `name{label=value}`); all others are summed over. */
const KEPT_LABELS = ['operation', 'activity_type', 'phase'];

/** The `_sum` and `_count` series of every histogram in `text`, each summed over its labels but those of KEPT_LABELS. */
export function parseHistograms(text: string): Histograms {
  const out: Histograms = {};
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)_(sum|count)(?:\{([^}]*)\})?\s+([-+0-9.eE]+|NaN)\s*$/.exec(line);
    if (!m) continue;
    const value = Number(m[4]);
    if (!Number.isFinite(value)) continue;
    const kept = [...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].filter(([, label]) => KEPT_LABELS.includes(label)).map(([, label, v]) => `${label}=${v}`);
    const entry = (out[kept.length ? `${m[1]}{${kept.join(',')}}` : m[1]] ??= { sum: 0, count: 0 });
    entry[m[2] as 'sum' | 'count'] += value;
  }
  return out;
}

/** What each histogram gained between two readings, per step: how many observations, and their mean and total per step (in the histogram's unit). */
export function perStepDelta(before: Histograms, after: Histograms, steps: number, names: string[]): Record<string, { perStep: number; meanEach: number | null; totalPerStep: number } | null> {
  const out: Record<string, { perStep: number; meanEach: number | null; totalPerStep: number } | null> = {};
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  for (const name of names) {
    const a = before[name] ?? { sum: 0, count: 0 };
    const b = after[name];
    if (!b || !(steps > 0)) {
      out[name] = null;
      continue;
    }
    const count = b.count - a.count;
    const sum = b.sum - a.sum;
    out[name] = { perStep: round(count / steps), meanEach: count > 0 ? round(sum / count) : null, totalPerStep: round(sum / steps) };
  }
  return out;
}
