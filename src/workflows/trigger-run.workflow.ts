/**
 * One run of a trigger, started by its Temporal Schedule (or its manual trigger). It
 * records the run, opens a session on the trigger's environment whose one task ends it
 * (a child session workflow, so the Temporal UI shows schedule → run → session), waits for
 * the outcome, settles the run (counting failures, pausing the trigger at its limit) and
 * delivers the result. A failed attempt is retried by Temporal under the trigger's
 * retryPolicy (the schedule's action carries it); the run record keeps one id across the
 * attempts. A run that finds another run of its trigger still going records itself as
 * `skipped`. Deterministic: no I/O, no Node.
 */
import * as wf from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { TriggerActivities } from '../activities/trigger.activities';
import { canRetryLater, NON_RETRYABLE_ERROR_TYPES } from '../contracts/error-codes';
import { SESSION_WORKFLOW, sessionWorkflowId } from '../contracts/session-messages';
import { OwnerUserIdKey, SessionStatusKey, TriggerIdKey } from '../contracts/search-attributes';
import type { sessionWorkflow } from './session.workflow';
import {
  chatDeliveryWorkflowId,
  triggerRunId,
  webhookDeliveryWorkflowId,
  type RunFailure,
  type RunTrigger,
  type SettledRun,
  type SettleRunInput,
  type TriggerRunInput,
  type TriggerRunSummary,
} from '../contracts/trigger-types';
import { chatDeliveryWorkflow, webhookDeliveryWorkflow } from './webhook-delivery.workflow';

/** Set by Temporal on workflows a schedule starts. */
const ScheduledStartTimeKey = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

const records = wf.proxyActivities<TriggerActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 },
});
const opening = wf.proxyActivities<TriggerActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES] },
});

/** Marks runs whose session ids come from an activity. */
const RUN_SESSION_IDS_PATCH = 'run-session-ids-from-activity';

export async function triggerRunWorkflow(input: TriggerRunInput): Promise<TriggerRunSummary> {
  const info = wf.workflowInfo();
  const runId = triggerRunId(info.firstExecutionRunId);
  const scheduledAt = info.typedSearchAttributes.get(ScheduledStartTimeKey);
  const maxAttempts = info.retryPolicy?.maximumAttempts || 1;

  const begun = await records.beginTriggerRun({ triggerId: input.triggerId, runId, attempt: info.attempt, scheduledAt: scheduledAt ? scheduledAt.toISOString() : null, workflowId: info.workflowId });
  if (begun.kind === 'gone') return { runId, status: 'gone' };
  if (begun.kind === 'finished') return { runId, status: begun.status };
  if (begun.kind === 'skipped') return { runId, status: 'skipped' };

  const ran: SessionRun = begun.failure ? { failure: begun.failure } : await runSession(begun.trigger, runId);
  const settled = await records.settleTriggerRun({ triggerId: input.triggerId, runId, attempt: info.attempt, maxAttempts, sessionId: ran.sessionId, taskId: ran.taskId, failure: ran.failure, sessionError: ran.sessionError });
  if (!settled.final) {
    // Temporal starts the next attempt after the retry policy's backoff.
    throw wf.ApplicationFailure.create({ type: settled.code ?? 'RUN_FAILED', message: settled.error ?? 'The run failed', nonRetryable: false });
  }
  await deliverOutcome(settled);
  if (settled.status !== 'completed') {
    // Shown as failed in the Temporal UI; the record already holds the outcome.
    throw wf.ApplicationFailure.create({ type: settled.code ?? 'RUN_FAILED', message: settled.error ?? 'The run failed', nonRetryable: true });
  }
  return { runId, status: settled.status };
}

/** What the run's session came to, as the run's record is settled with it. */
type SessionRun = Pick<SettleRunInput, 'sessionId' | 'taskId' | 'failure' | 'sessionError'>;

/** Opens the run's session and waits for its task; a failure to get that far is the run's failure. */
async function runSession(trigger: RunTrigger, runId: string): Promise<SessionRun> {
  let ids: { sessionId: string; taskId: string } | undefined;
  try {
    ids = await newSessionIds();
    const sessionError = await runChildSession(trigger, runId, ids);
    return { ...ids, sessionError };
  } catch (err) {
    if (wf.isCancellation(err)) throw err;
    return { ...ids, failure: describeFailure(err) };
  }
}

/**
 * Session ids are capabilities: they come from the service's random source (an activity),
 * never from the workflow's seeded generator. Runs recorded before keep theirs.
 */
async function newSessionIds(): Promise<{ sessionId: string; taskId: string }> {
  if (wf.patched(RUN_SESSION_IDS_PATCH)) return opening.newRunSessionIds();
  const sessionId = wf.uuid4().replace(/-/g, '');
  const taskId = `task_${wf.uuid4().replace(/-/g, '').slice(0, 24)}`;
  return { sessionId, taskId };
}

/** The session as a child workflow, whose one task ends it; answers the session's own error when it failed. */
async function runChildSession(trigger: RunTrigger, runId: string, { sessionId, taskId }: { sessionId: string; taskId: string }): Promise<SessionRun['sessionError']> {
  const opened = await opening.openRunSession({ runId, trigger, sessionId, taskId });
  let view: Awaited<ReturnType<typeof sessionWorkflow>>;
  try {
    view = await wf.executeChild<typeof sessionWorkflow>(SESSION_WORKFLOW, {
      workflowId: sessionWorkflowId(sessionId),
      taskQueue: opened.taskQueue,
      args: [opened.input],
      typedSearchAttributes: [
        { key: OwnerUserIdKey, value: trigger.userId },
        { key: SessionStatusKey, value: 'pending' },
        { key: TriggerIdKey, value: trigger.triggerId },
      ],
      memo: { userId: trigger.userId, triggerId: trigger.triggerId, runId },
      // The session ends itself (its task ends it) and releases what it holds; it is never cut short by the run.
      parentClosePolicy: wf.ParentClosePolicy.ABANDON,
      cancellationType: wf.ChildWorkflowCancellationType.ABANDON,
    });
  } catch (err) {
    // Not started, or it failed without ending itself: what openRunSession took is given back.
    if (!wf.isCancellation(err)) await records.abandonRunSession({ sessionId, userId: trigger.userId, environmentId: trigger.environmentId });
    throw err;
  }
  return view.error && view.status === 'failed' ? view.error : undefined;
}

/** Starts the run's deliveries (webhook, chat) and waits for them; each records its own outcome. */
async function deliverOutcome(settled: SettledRun): Promise<void> {
  const deliveries: Promise<unknown>[] = [];
  if (settled.delivery) {
    deliveries.push(wf.executeChild(webhookDeliveryWorkflow, { workflowId: webhookDeliveryWorkflowId(settled.delivery.deliveryId), args: [settled.delivery], parentClosePolicy: wf.ParentClosePolicy.ABANDON }));
  }
  if (settled.chatDelivery) {
    deliveries.push(wf.executeChild(chatDeliveryWorkflow, { workflowId: chatDeliveryWorkflowId(settled.chatDelivery.deliveryId), args: [settled.chatDelivery], parentClosePolicy: wf.ParentClosePolicy.ABANDON }));
  }
  for (const outcome of await Promise.allSettled(deliveries)) {
    // The run is settled and never runs again, whatever a delivery came to.
    if (outcome.status === 'rejected') {
      if (wf.isCancellation(outcome.reason)) throw outcome.reason;
      wf.log.warn('a delivery of the run did not finish', { error: String(outcome.reason) });
    }
  }
}

function describeFailure(err: unknown): RunFailure {
  const failure = err instanceof wf.ActivityFailure || err instanceof wf.ChildWorkflowFailure ? (err.cause ?? err) : err;
  if (failure instanceof wf.ApplicationFailure) {
    const code = failure.type ?? 'RUN_FAILED';
    return { code, message: failure.message, retryable: canRetryLater(code) };
  }
  if (failure instanceof wf.TimeoutFailure) return { code: 'RUN_TIMEOUT', message: 'A step of the run timed out', retryable: true };
  return { code: 'RUN_FAILED', message: failure instanceof Error ? failure.message : String(failure), retryable: true };
}
