/** What the agent does, written into the task's recording (secrets masked). */
import type { RecordedStep } from '../contracts/recording';
import type { StepContext } from './step-context';
import type { ToolContext } from './types';

/** Adds a step to the task's recording (never fails the step). */
export function recordStep(step: StepContext, recorded: Omit<RecordedStep, 'seq' | 'at'>): void {
  const { input, options } = step;
  const recorder = options.recorder;
  if (!recorder) return;
  const args = options.vault ? (options.vault.maskDeep(input.sessionId, recorded.args) as Record<string, unknown>) : recorded.args;
  // Stored off the step's path (the recorder keeps the order; the task's end waits for it).
  void recorder.add(
    { userId: input.userId, sessionId: input.sessionId, taskId: input.taskId },
    { ...recorded, args, urlBefore: step.mask(recorded.urlBefore), urlAfter: step.mask(recorded.urlAfter) },
  );
}

/** The arguments as recorded: an element's index of the moment means nothing later (the element description replaces it). */
export function recordedArgs(tool: string, args: unknown, described: boolean): Record<string, unknown> {
  const copy = { ...(args as Record<string, unknown>) };
  if (described && tool !== 'switch_tab') delete copy.index;
  return copy;
}

/** The active tab's address, or '' when it cannot be read (a closed page). */
export function safeUrl(toolContext: ToolContext): string {
  try {
    return toolContext.page.url();
  } catch {
    return '';
  }
}
