import { errors } from 'playwright-core';
import { isServiceError } from '../../contracts/errors';
import { isPageCrash, pageCrashFailure } from '../observe/page-errors';

/** What Playwright's call log says stood in the way, most telling first. */
const BLOCKERS: [RegExp, string][] = [
  [/(<[^\n]*?>)(?: from <[^\n]*?> subtree)? intercepts pointer events/, 'another element covers it: $1'],
  [/element is not visible/, 'the element is not visible'],
  [/element is not enabled/, 'the element is disabled'],
  [/element is not editable/, 'the element is read-only'],
  [/element is outside of the viewport/, 'the element is outside of the viewport'],
  [/element is not stable/, 'the element keeps moving (animation)'],
  [/element is not attached to the DOM|Element is not attached to the DOM/, 'the element was removed from the page'],
];

/**
 * Turns a failed Playwright call into what the model is told: one clear line. A crashed page
 * ends the task (PAGE_CRASH); the service's own failures pass unchanged.
 */
export function actionFailure(err: unknown, action: string): Error {
  if (isServiceError(err)) return err;
  if (isPageCrash(err)) return pageCrashFailure(err);
  if (!(err instanceof Error)) return new Error(`${action} failed: ${String(err)}`);
  const log = err.message;
  for (const [pattern, reason] of lastFirst(log)) {
    const match = pattern.exec(log);
    if (match) return new Error(`${action} failed: ${reason.replace('$1', truncate(match[1] ?? '', 120))}`);
  }
  const first = log.split('\n')[0].replace(/^[\w.]+: /, '').replace(/^Error: /, '');
  if (err instanceof errors.TimeoutError) return new Error(`${action} failed: the element did not become ready in time (${first})`);
  return new Error(`${action} failed: ${first}`);
}

/** Playwright retries and logs each attempt: the last blocker logged is the current one. */
function lastFirst(log: string): [RegExp, string][] {
  return [...BLOCKERS].sort(([first], [second]) => lastIndex(log, second) - lastIndex(log, first));
}

function lastIndex(text: string, pattern: RegExp): number {
  const global = new RegExp(pattern.source, 'g');
  let at = -1;
  for (let m = global.exec(text); m; m = global.exec(text)) at = m.index;
  return at;
}

const truncate = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Runs a browser call, reporting its failure as `actionFailure`; a stopped task's abort passes as is. */
export async function attempt<T>(signal: AbortSignal, action: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (signal.aborted) throw err;
    throw actionFailure(err, action);
  }
}
