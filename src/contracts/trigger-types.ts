/**
 * Names, ids and plain data of the trigger-run and webhook-delivery workflows, shared by
 * the workflows, their activities and the API. No runtime imports: bundled into the
 * workflow sandbox.
 */
import type { ReplaySource, SessionInput, TaskParams, Usage } from './session-types';

export const TRIGGER_RUN_WORKFLOW = 'triggerRunWorkflow';
export const WEBHOOK_DELIVERY_WORKFLOW = 'webhookDeliveryWorkflow';

/** The Temporal Schedule of a trigger. */
export const triggerScheduleId = (triggerId: string): string => `trigger-${triggerId}`;
/** Runs get this id plus the scheduled time (Temporal appends it). */
export const triggerRunWorkflowId = (triggerId: string): string => `trigger-run-${triggerId}`;
export const webhookDeliveryWorkflowId = (deliveryId: string): string => `webhook-${deliveryId}`;
/** One delivery per task or run: its id (the `webhook-id` header) is derived, so a retried start finds the same one. */
export const taskDeliveryId = (taskId: string): string => `dlv_${taskId}`;
export const runDeliveryId = (runId: string): string => `dlv_${runId}`;
/** A run's delivery to its environment's chat connection (deliveryMode bot or both). */
export const runChatDeliveryId = (runId: string): string => `bot_${runId}`;
export const chatDeliveryWorkflowId = (deliveryId: string): string => `chat-${deliveryId}`;
/** A run's id is stable across the retries of its workflow (one execution chain). */
export const triggerRunId = (firstExecutionRunId: string): string => `run_${firstExecutionRunId.replace(/-/g, '')}`;

export type WebhookConfig = NonNullable<TaskParams['webhook']>;
export type SubmittedData = WebhookConfig['submittedData'];

export type RunStatus = 'running' | 'completed' | 'failed' | 'timed_out' | 'skipped';
export type TriggerOutputType = 'text' | 'structured';
export type DeliveryMode = 'webhook' | 'bot' | 'both';

export interface TriggerRunInput {
  triggerId: string;
}

/** What a run needs of its trigger, read when the run begins (later edits apply to later runs). */
export interface RunTrigger {
  triggerId: string;
  userId: string;
  environmentId: string;
  /** The trigger's automation policy, applied to the run's session. */
  policyId?: string | null;
  prompt: string;
  startingUrl: string | null;
  outputType: TriggerOutputType;
  outputSchema: Record<string, unknown> | null;
  /** Most USD the run may cost. */
  maxCost?: number;
  /** The trigger replays: the recording of its last successful run (none before the first success). */
  replay?: ReplaySource;
}

export interface RunFailure {
  code: string;
  message: string;
  /** Whether another attempt (the trigger's retryPolicy) could succeed. */
  retryable: boolean;
}

export type BeginRunResult =
  | { kind: 'gone' }
  /** The run was settled by an earlier execution (a retried workflow): nothing runs twice. */
  | { kind: 'finished'; status: RunStatus }
  | { kind: 'skipped'; runningRunId: string | null }
  | { kind: 'run'; trigger: RunTrigger; failure?: RunFailure };

export interface OpenRunSessionInput {
  runId: string;
  trigger: RunTrigger;
  sessionId: string;
  taskId: string;
}

export interface OpenedRunSession {
  input: SessionInput;
  taskQueue: string;
}

export interface SettleRunInput {
  triggerId: string;
  runId: string;
  attempt: number;
  /** From the run's Temporal retry policy; 1 without one. */
  maxAttempts: number;
  sessionId?: string;
  taskId?: string;
  /** Why the run could not get as far as a task. */
  failure?: RunFailure;
  /** The session's own error when it ended without running the task (no browser, say). */
  sessionError?: { code: string; message: string };
}

export interface SettledRun {
  status: RunStatus;
  /** False while the run will be attempted again. */
  final: boolean;
  code?: string;
  error?: string;
  usage?: Usage;
  /** The webhook delivery to make (final attempts only). */
  delivery?: DeliveryInput;
  /** The delivery to the environment's chat connection to make (final attempts only). */
  chatDelivery?: ChatDeliveryInput;
  /** The trigger paused itself (maxConsecutiveFailures reached). */
  autoPaused?: boolean;
}

export interface TriggerRunSummary {
  runId: string;
  status: RunStatus | 'gone';
  code?: string;
}

/** Where a delivery's content comes from and where its attempts are recorded. */
export type DeliveryTarget = { kind: 'task'; sessionId: string; taskId: string } | { kind: 'run'; runId: string; cronJobId: string };

export interface DeliveryInput {
  deliveryId: string;
  userId: string;
  webhook: WebhookConfig;
  target: DeliveryTarget;
}

/**
 * A message to an environment's chat connection: a trigger run's outcome (deliveryMode bot),
 * or a session's reach-out (its guardrail question, or a task's result with reachOutMode
 * full), read from the task record when sent.
 */
export type ChatDeliveryInput =
  | { deliveryId: string; userId: string; environmentId: string; triggerName: string; target: Extract<DeliveryTarget, { kind: 'run' }>; reachOut?: undefined }
  | { deliveryId: string; userId: string; environmentId: string; target: Extract<DeliveryTarget, { kind: 'task' }>; reachOut: 'guardrail' | 'result' };

/** A session's reach-out messages: one per guardrail (by the step that asked) and one per task result. */
export const reachOutDeliveryId = (taskId: string, what: number | 'result'): string => `reach_${taskId}_${what}`;

export interface DeliveryResult {
  deliveryId: string;
  /** `skipped`: a reach-out not sent, someone watches the session (or the question was answered). */
  status: 'delivered' | 'failed' | 'skipped';
  /** Known when delivered; after a failure the record on the task or run holds the count. */
  attempts: number | null;
  statusCode: number | null;
  error?: string;
}
