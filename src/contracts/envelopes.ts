import { linkedFiles, type FileLinks } from './link-tokens';
import type { TaskView } from './session-types';

/** The contract's task envelopes, built from one task view. */
export function taskEnvelope(links: FileLinks, view: TaskView, opts: { withCompletedAt: boolean }): { status: number; body: Record<string, unknown> } {
  const ids = { sessionId: view.sessionId, taskId: view.taskId };
  switch (view.status) {
    case 'task_completed':
      return {
        status: 200,
        body: {
          success: true,
          ...ids,
          type: 'task_completed',
          status: 'task_completed',
          data: { message: view.message ?? '', files: linkedFiles(links, view.files), network: view.network ?? [], ...(view.verification ? { verification: view.verification } : {}) },
          usage: view.usage,
          ...(opts.withCompletedAt && view.completedAt ? { completedAt: view.completedAt } : {}),
        },
      };
    case 'failed':
      return {
        status: 200,
        body: {
          success: false,
          ...ids,
          status: 'failed',
          error: view.error ?? 'Task failed',
          code: view.code ?? 'TASK_FAILED',
          ...(view.details ? { details: view.details } : {}),
          // TASK_TIMEOUT clients may read the other documented usage shape.
          usage: view.code === 'TASK_TIMEOUT' ? { ...view.usage, inputTokens: view.usage.prompt_tokens, outputTokens: view.usage.completion_tokens } : view.usage,
          ...(opts.withCompletedAt && view.completedAt ? { completedAt: view.completedAt } : {}),
        },
      };
    case 'guardrail_trigger':
      return {
        status: 200,
        body: { success: true, ...ids, type: 'guardrail_trigger', status: 'guardrail_trigger', data: { type: view.guardrail?.type ?? 'human_input_needed', value: view.guardrail?.value ?? '' }, usage: view.usage },
      };
    case 'stopped':
      return { status: 200, body: { success: true, ...ids, status: 'stopped', usage: view.usage, data: { message: view.message ?? '' } } };
    default:
      return { status: 200, body: { success: true, ...ids, status: view.status, usage: view.usage } };
  }
}

export function pendingEnvelope(baseUrl: string, sessionId: string, taskId: string): Record<string, unknown> {
  return {
    success: true,
    sessionId,
    taskId,
    status: 'pending',
    pending: true,
    pollUrl: `${baseUrl}/task/${sessionId}/${taskId}`,
    message: 'The task is still running; poll pollUrl for its result.',
  };
}
