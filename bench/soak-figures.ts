/**
 * The figures of the soak bench: each process's memory where it settled against where the
 * load ended, its trend, the tasks' outcomes (a task whose record is not complete is lost),
 * and the store's growth per task.
 */

/** One reading of the stack's memory, `at` ms after the load started, MB by part of the stack. */
export interface MemorySample {
  at: number;
  mb: Record<string, number>;
}

/** Median of the values (the mean of the two middle ones for an even count); null without values. */
export function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** The median MB of one part over the samples taken in [from, to]. */
export function windowMedian(samples: MemorySample[], part: string, from: number, to: number): number | null {
  return median(samples.filter((s) => s.at >= from && s.at <= to && s.mb[part] !== undefined).map((s) => s.mb[part]));
}

/** Least-squares slope of one part's MB over the samples in [from, to], in MB per minute; null under two samples. */
export function slopePerMinute(samples: MemorySample[], part: string, from: number, to: number): number | null {
  const pts = samples.filter((s) => s.at >= from && s.at <= to && s.mb[part] !== undefined).map((s) => [s.at / 60_000, s.mb[part]]);
  if (pts.length < 2) return null;
  const mx = pts.reduce((a, [x]) => a + x, 0) / pts.length;
  const my = pts.reduce((a, [, y]) => a + y, 0) / pts.length;
  const sxx = pts.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  if (sxx === 0) return null;
  return Math.round((pts.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0) / sxx) * 100) / 100;
}

/** Where the load's windows are: settled from `settleFrom` for `windowMs`; the end is the last `windowMs` before `loadEnd`. */
export interface DriftWindows {
  settleFrom: number;
  windowMs: number;
  loadEnd: number;
}

export interface Drift {
  settledMB: number | null;
  endMB: number | null;
  changePct: number | null;
  /** Trend from the settled window to the load's end. */
  slopeMBPerMin: number | null;
  within: boolean;
}

/** One part's memory at the end of the load against where it settled, within `limitPct` or not. */
export function drift(samples: MemorySample[], part: string, w: DriftWindows, limitPct: number): Drift {
  const settledMB = windowMedian(samples, part, w.settleFrom, w.settleFrom + w.windowMs);
  const endMB = windowMedian(samples, part, Math.max(w.settleFrom + w.windowMs, w.loadEnd - w.windowMs), w.loadEnd);
  const changePct = settledMB && endMB !== null ? round1(((endMB - settledMB) / settledMB) * 100) : null;
  return {
    settledMB: settledMB === null ? null : round1(settledMB),
    endMB: endMB === null ? null : round1(endMB),
    changePct,
    slopeMBPerMin: slopePerMinute(samples, part, w.settleFrom, w.loadEnd),
    within: changePct !== null && Math.abs(changePct) <= limitPct,
  };
}

/** What a task was meant to be: plain steps to its end, a person taking over and handing back, or stopped mid-task. */
export type TaskKind = 'plain' | 'takeover' | 'stopped';

/**
 * A task as the bench left it: its kind, the status and usage it ended with, the actions of its
 * recording (null: unreadable); `swept` when its records were deleted by the retention since,
 * `missing` when its record answered 404 before its retention.
 */
export interface TaskRecord {
  kind: TaskKind;
  taskId?: string;
  status?: string;
  hasUsage?: boolean;
  actions?: string[] | null;
  swept?: boolean;
  missing?: boolean;
}

/** A task's record read again at the end of the run: the HTTP status of `GET /task`, and its body's status and usage. */
export interface FinalRead {
  http: number;
  status?: string;
  hasUsage?: boolean;
}

/**
 * The task as the end of the run reads it. A record still there is taken as it is now; a 404
 * is `swept` when the task's session ended more than `retentionMs` before (what it was when it
 * ended stands), and `missing` otherwise (lost).
 */
export function settleFinal(t: TaskRecord, final: FinalRead, sessionEndedAgoMs: number | null, retentionMs: number | null): TaskRecord {
  if (final.http === 200) return { ...t, status: final.status, hasUsage: final.hasUsage };
  const swept = final.http === 404 && retentionMs !== null && sessionEndedAgoMs !== null && sessionEndedAgoMs > retentionMs;
  return swept ? { ...t, swept: true } : { ...t, missing: true, status: `http ${final.http}` };
}

/** The actions a plain task's recording holds: its scripted clicks, then done. */
export function plainActions(clicks: number): string[] {
  return [...Array.from({ length: clicks }, () => 'click_element'), 'done'];
}

/**
 * Whether a task's record is complete: an ended status with its usage, and a readable
 * recording that fits how it ended (a completed task's ends with done, a plain one holds
 * exactly its scripted actions; a stopped task's has no done).
 */
export function recordComplete(t: TaskRecord, clicks: number): boolean {
  if (t.missing || !t.taskId || !t.status || !['task_completed', 'stopped', 'failed'].includes(t.status) || !t.hasUsage || !t.actions) return false;
  if (t.status === 'task_completed') {
    if (t.actions[t.actions.length - 1] !== 'done') return false;
    return t.kind !== 'plain' || JSON.stringify(t.actions) === JSON.stringify(plainActions(clicks));
  }
  return !t.actions.includes('done');
}

export interface Tally {
  started: number;
  completed: number;
  stopped: number;
  failed: number;
  /** Started (a task id given) but its record not complete when it ended, or gone before its retention. */
  lost: number;
  /** Complete when they ended, their records deleted by the retention since (counted in completed, stopped, failed too). */
  swept: number;
  /** Ended otherwise than its kind meant (a plain or taken-over task not completed, a stopped one not stopped). */
  unexpected: number;
}

/** The tasks' outcomes; a task without a task id was refused at its start and is not counted as started. */
export function tally(tasks: TaskRecord[], clicks: number): Tally {
  const started = tasks.filter((t) => t.taskId);
  const count = (status: string) => started.filter((t) => t.status === status && recordComplete(t, clicks)).length;
  const expected = (t: TaskRecord) => (t.kind === 'stopped' ? 'stopped' : 'task_completed');
  return {
    started: started.length,
    completed: count('task_completed'),
    stopped: count('stopped'),
    failed: count('failed'),
    lost: started.filter((t) => !recordComplete(t, clicks)).length,
    swept: started.filter((t) => t.swept && recordComplete(t, clicks)).length,
    unexpected: started.filter((t) => t.status !== expected(t)).length,
  };
}

/** Bytes added per task between two readings of a size, in KB. */
export function kbPerTask(fromBytes: number, toBytes: number, tasks: number): number | null {
  return tasks > 0 ? round1((toBytes - fromBytes) / 1024 / tasks) : null;
}

/** Which kind of session the n-th one is, cycling: half ended by their owner, a sixth each left idle, taken over, stopped mid-task. */
export type SessionKind = 'ended' | 'idle' | 'takeover' | 'stopped';
const CYCLE: SessionKind[] = ['ended', 'takeover', 'ended', 'idle', 'stopped', 'ended', 'idle', 'ended', 'takeover', 'stopped', 'ended', 'ended'];
export function sessionKind(n: number): SessionKind {
  return CYCLE[n % CYCLE.length];
}
