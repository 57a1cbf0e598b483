import type { RecordedStep } from './types';

/** A runnable @playwright/test file that performs a recording again. */
export function playwrightScript(recording: { sessionId: string; taskId: string; steps: RecordedStep[] }): string {
  throw new Error(`Playwright export of ${recording.taskId} is not available yet`);
}
