import type { SiteRecord } from './site-server';

/** What a task run left behind, as the verdict sees it: never the agent's own claim of success. */
export interface Outcome {
  /** The task's final status (task_completed, failed, stopped, timeout, ...). */
  status: string;
  code?: string;
  /** The final answer (data.message) of a completed task; null otherwise. */
  answer: string | null;
  /** What the site received during this run. */
  records: SiteRecord[];
  /** How many times the agent asked the human (request_human_input). */
  guardrails: number;
}

export interface Verdict {
  pass: boolean;
  reason: string;
}

export const pass = (reason: string): Verdict => ({ pass: true, reason });
export const fail = (reason: string): Verdict => ({ pass: false, reason });

/** Lower case, one space between words, no surrounding space or final full stop. */
export function norm(value: unknown): string {
  return String(value ?? '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.!]$/, '');
}

/** Only the digits (phone numbers, codes). */
export const digits = (value: unknown): string => String(value ?? '').replace(/\D/g, '');

const clip = (s: string, n = 120) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * The answer names the expected value (`want`, tested on the normalised answer) and none of
 * the distractors the page also shows (`forbid`): an answer listing every value proves nothing.
 */
export function answerNames(o: Outcome, want: RegExp, forbid: RegExp[] = []): Verdict {
  if (o.answer === null) return fail(`no answer (task ${o.status}${o.code ? ` ${o.code}` : ''})`);
  const a = norm(o.answer);
  if (!want.test(a)) return fail(`the answer "${clip(o.answer)}" does not give ${want}`);
  const wrong = forbid.find((f) => f.test(a));
  if (wrong) return fail(`the answer "${clip(o.answer)}" also gives ${wrong}`);
  return pass(`the answer gives ${want}`);
}

/** The structured answer, parsed; null when there is none or it is not JSON. */
export function answerJson(o: Outcome): unknown {
  if (o.answer === null) return null;
  try {
    return JSON.parse(o.answer);
  } catch {
    return null;
  }
}

/** The last form post (or page report) the site received at `path`. */
export function lastPost(o: Outcome, path: string): SiteRecord | undefined {
  return o.records.filter((r) => r.method === 'POST' && r.path === path).at(-1);
}

/** The page's own reports of `event` (POSTed JSON to __record), in order. */
export function reports(o: Outcome, event: string): Record<string, unknown>[] {
  return o.records.filter((r) => r.method === 'POST' && r.path === '__record' && r.fields.event === event).map((r) => r.fields);
}

/** The page at `path` was served with these query parameters. */
export function visitedWith(o: Outcome, path: string, query: Record<string, string>): Verdict {
  const seen = o.records.some((r) => r.method === 'GET' && r.path === path && Object.entries(query).every(([k, v]) => r.query[k] === v));
  return seen ? pass(`${path} was opened with ${JSON.stringify(query)}`) : fail(`${path} was never opened with ${JSON.stringify(query)}`);
}

/** The site served this page during the run. */
export const visited = (o: Outcome, path: string): boolean => o.records.some((r) => r.method === 'GET' && r.path === path);

/**
 * The last post to `path` has these fields (each compared normalised); `absent` fields must
 * not be in it (an unticked checkbox is not sent).
 */
export function posted(o: Outcome, path: string, want: Record<string, string | ((v: unknown) => boolean)>, absent: string[] = []): Verdict {
  const rec = lastPost(o, path);
  if (!rec) return fail(`the site received no post to ${path}`);
  for (const [field, expected] of Object.entries(want)) {
    const value = rec.fields[field];
    const ok = typeof expected === 'function' ? expected(value) : norm(value) === norm(expected);
    if (!ok) return fail(`${path} received ${field}=${JSON.stringify(value ?? null)}${typeof expected === 'string' ? `, expected ${JSON.stringify(expected)}` : ''}`);
  }
  const extra = absent.find((f) => f in rec.fields);
  if (extra) return fail(`${path} received ${extra}=${JSON.stringify(rec.fields[extra])}, which should not have been sent`);
  return pass(`${path} received ${Object.keys(want).join(', ')} as expected`);
}

/** Every verdict must pass; the first failure is the reason. */
export function all(...verdicts: Verdict[]): Verdict {
  const failed = verdicts.find((v) => !v.pass);
  return failed ?? pass(verdicts.map((v) => v.reason).join('; '));
}
