/**
 * Bodies of webhook deliveries, by `submittedData`:
 *  - `ai_response`: `{sessionId, taskId, type, data: {message}}`, the model's output only;
 *  - `full_response`: the whole envelope polling answers (task_completed or failed), usage included;
 *  - `just_ping`: `{sessionId, taskId, type, status, timestamp}`, no data.
 * Trigger runs add `cronJobId` and `runId`. `type` is `task_completed`, `task_failed` or
 * `task_stopped`; `timestamp` is the completion time in Unix ms. Built only from the
 * stored outcome: task secrets are never part of it.
 */
import type { TaskStatus } from '../contracts/session-types';
import type { SubmittedData } from '../contracts/trigger-types';

export type DeliveryType = 'task_completed' | 'task_failed' | 'task_stopped';

export interface DeliverySubject {
  sessionId: string | null;
  taskId: string | null;
  status: Extract<TaskStatus, 'task_completed' | 'failed' | 'stopped'>;
  /** The model's output (the task's data.message); empty for a failure. */
  message: string;
  completedAt: number;
  /** The envelope `GET /task/:sessionId/:taskId` answers for this outcome. */
  envelope: Record<string, unknown>;
  trigger?: { cronJobId: string; runId: string };
}

export function deliveryType(status: DeliverySubject['status']): DeliveryType {
  return status === 'task_completed' ? 'task_completed' : status === 'stopped' ? 'task_stopped' : 'task_failed';
}

export function buildPayload(submittedData: SubmittedData, subject: DeliverySubject): Record<string, unknown> {
  const ids = { sessionId: subject.sessionId, taskId: subject.taskId };
  const trigger = subject.trigger ? { cronJobId: subject.trigger.cronJobId, runId: subject.trigger.runId } : {};
  const type = deliveryType(subject.status);
  switch (submittedData) {
    case 'ai_response': {
      // A verified task's delivery carries the verdicts its result passed.
      const data = subject.envelope.data as { verification?: unknown } | undefined;
      return { ...ids, type, data: { message: subject.message, ...(data?.verification ? { verification: data.verification } : {}) }, ...trigger };
    }
    case 'just_ping':
      return { ...ids, type, status: subject.status, timestamp: subject.completedAt, ...trigger };
    case 'full_response':
      return { ...subject.envelope, ...ids, type: subject.envelope.type ?? type, ...trigger };
  }
}

/** The failed envelope of a run that ended before it had a task (no balance, no environment...). */
export function failedRunEnvelope(fields: { sessionId: string | null; taskId: string | null; error: string; code: string; completedAt: number }): Record<string, unknown> {
  return {
    success: false,
    sessionId: fields.sessionId,
    taskId: fields.taskId,
    status: 'failed',
    error: fields.error,
    code: fields.code,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, completion_time: 0, cost: 0 },
    completedAt: new Date(fields.completedAt).toISOString(),
  };
}
