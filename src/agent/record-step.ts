/** What the agent does, written into the task's recording (secrets masked). */
import type { RecordedStep } from '../contracts/recording';
import type { StepContext } from './step-context';
import type { AgentTool, ToolContext } from './types';

/** Adds a step to the task's recording (never fails the step). */
export function recordStep(step: StepContext, recorded: Omit<RecordedStep, 'seq' | 'at'>): void {
  const { input, options } = step;
  const recorder = options.recorder;
  if (!recorder) return;
  // Stored off the step's path (the recorder keeps the order; the task's end waits for it).
  void recorder.add({ userId: input.userId, sessionId: input.sessionId, taskId: input.taskId }, maskedStep(recorded, step.mask));
}

/**
 * A step as the recording keeps it: every text in it masked (its arguments, the element's
 * text, name, label, address and frame, the addresses, the summary, the error, the agent's
 * words); who did it, the action and the outcome are names of the service's own.
 */
export function maskedStep<T extends Pick<RecordedStep, 'by' | 'action' | 'outcome'>>(recorded: T, mask: (text: string) => string): T {
  return { ...maskStrings(recorded, mask), by: recorded.by, action: recorded.action, outcome: recorded.outcome };
}

/** Every string inside a JSON-like value through `mask`. */
export function maskStrings<T>(value: T, mask: (text: string) => string): T {
  if (typeof value === 'string') return mask(value) as T;
  if (Array.isArray(value)) return value.map((item) => maskStrings(item, mask)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskStrings(item, mask)])) as T;
  return value;
}

/** The arguments as recorded: an element's index of the moment means nothing later (the element description replaces it). */
export function recordedArgs(tool: AgentTool, args: unknown, described: boolean): Record<string, unknown> {
  const copy = { ...(args as Record<string, unknown>) };
  if (described && tool.recording.index === 'element') delete copy.index;
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
