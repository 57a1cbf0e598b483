import { TaskFailure } from '../../contracts/errors';

const CRASH = /Target crashed|Page crashed/i;
const CONTEXT_LOST = /Execution context was destroyed|Cannot find context with specified id|frame was detached|Frame has been detached/i;

/** A crashed renderer cannot be worked with any more: the task ends with PAGE_CRASH. */
export function isPageCrash(err: unknown): boolean {
  return err instanceof Error && CRASH.test(err.message);
}

export function pageCrashFailure(err: unknown): TaskFailure {
  const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return new TaskFailure('PAGE_CRASH', 'The browser page crashed', { reason });
}

/** The document went away under a script (a navigation); trying again on the new one is right. */
export function isContextLost(err: unknown): boolean {
  return err instanceof Error && CONTEXT_LOST.test(err.message);
}
