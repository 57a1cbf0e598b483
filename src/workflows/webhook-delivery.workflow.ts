/**
 * One webhook delivery: a task's or a trigger run's outcome POSTed to the receiver. Each
 * attempt is one activity; Temporal's retry policy spaces them (1 s, 2 s, 4 s ... up to
 * 5 min between attempts, 30 attempts, about 2 hours in all), so a receiver that is down
 * for a while, or a restart of the API or the workers, loses nothing. A 4xx other than
 * 408/429 ends the delivery at once. Deterministic: no I/O, no Node.
 */
import * as wf from '@temporalio/workflow';
import { NON_RETRYABLE_ERROR_TYPES } from '../contracts/error-codes';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { WebhookActivities } from '../activities/webhook.activities';
import { detailsOf } from './failures';
import { chatDeliveryWorkflowId, reachOutDeliveryId, taskDeliveryId, webhookDeliveryWorkflowId, type ChatDeliveryInput, type DeliveryInput, type DeliveryResult, type WebhookConfig } from '../contracts/trigger-types';

/** The backoff of delivery attempts (exported for the tests and the docs). */
export const WEBHOOK_RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5m', maximumAttempts: 30 } as const;

const attempts = wf.proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30s',
  retry: { ...WEBHOOK_RETRY, nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES] },
});
const records = wf.proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 20 },
});

export async function webhookDeliveryWorkflow(input: DeliveryInput): Promise<DeliveryResult> {
  return deliver(input, () => attempts.deliverWebhook(input));
}

/** A run's outcome sent to its environment's chat connection, attempted as webhooks are. */
export async function chatDeliveryWorkflow(input: ChatDeliveryInput): Promise<DeliveryResult> {
  return deliver(input, () => attempts.deliverToChat(input));
}

async function deliver(input: Pick<DeliveryInput, 'deliveryId' | 'target'>, attempt: () => Promise<DeliveryResult>): Promise<DeliveryResult> {
  try {
    return await attempt();
  } catch (err) {
    const failure = err instanceof wf.ActivityFailure && err.cause ? err.cause : err;
    const error = failure instanceof Error ? failure.message : String(failure);
    await records.recordDeliveryGivenUp({ input, error });
    const answered = failure instanceof wf.ApplicationFailure ? detailsOf(failure)?.statusCode : undefined;
    const statusCode = typeof answered === 'number' ? answered : null;
    return { deliveryId: input.deliveryId, status: 'failed', attempts: null, statusCode, error };
  }
}

/**
 * For the session workflow: starts the delivery of a finished task's outcome and returns
 * at once (the delivery outlives the session). Call it after `completeTask` recorded the
 * outcome; a second call for the same task finds the delivery already started.
 */
export async function deliverTaskWebhook(args: { userId: string; sessionId: string; taskId: string; webhook: WebhookConfig }): Promise<void> {
  const deliveryId = taskDeliveryId(args.taskId);
  try {
    await wf.startChild(webhookDeliveryWorkflow, {
      workflowId: webhookDeliveryWorkflowId(deliveryId),
      args: [{ deliveryId, userId: args.userId, webhook: args.webhook, target: { kind: 'task', sessionId: args.sessionId, taskId: args.taskId } }],
      parentClosePolicy: wf.ParentClosePolicy.ABANDON,
      cancellationType: wf.ChildWorkflowCancellationType.ABANDON,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    wf.log.warn('webhook delivery could not be started', { taskId: args.taskId, error: String(err) });
  }
}

/**
 * For the session workflow (reachOutMode): starts a message to the environment's chat
 * connection, a guardrail's question (`step` is the step that asked) or a finished task's
 * result, and returns at once. Whether anyone watches the session is looked at by the
 * delivery itself; a second call for the same message finds it already started.
 */
export async function reachOutInChat(args: { userId: string; sessionId: string; taskId: string; environmentId: string; what: 'guardrail' | 'result'; step: number }): Promise<void> {
  const deliveryId = reachOutDeliveryId(args.taskId, args.what === 'result' ? 'result' : args.step);
  try {
    await wf.startChild(chatDeliveryWorkflow, {
      workflowId: chatDeliveryWorkflowId(deliveryId),
      args: [{ deliveryId, userId: args.userId, environmentId: args.environmentId, target: { kind: 'task', sessionId: args.sessionId, taskId: args.taskId }, reachOut: args.what }],
      parentClosePolicy: wf.ParentClosePolicy.ABANDON,
      cancellationType: wf.ChildWorkflowCancellationType.ABANDON,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    wf.log.warn('reach-out could not be started', { taskId: args.taskId, error: String(err) });
  }
}
