import { Context } from '@temporalio/activity';
import { failureOf } from '../contracts/errors';
import { taskEnvelope } from '../contracts/envelopes';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { Store } from '../store/store';
import { TriggerRunsRepository } from '../store/trigger-runs.repository';
import { WebhookSecretsRepository } from '../store/webhook-secrets.repository';
import { DeliveryRecords } from '../webhooks/delivery-records';
import { workerMetrics } from '../metrics/worker-metrics';
import { buildPayload, failedRunEnvelope, type DeliverySubject } from '../webhooks/payloads';
import { sendWebhook } from '../webhooks/sender';
import { openChatConnection } from '../environments/chat-connection';
import { sendChatMessage } from '../environments/chat-sender';
import { guardrailText, resultText, type Watchers } from '../environments/reach-out';
import { sessionViewToken } from '../contracts/link-tokens';
import { fileLinks, linkSecret } from '../files/links';
import { payloadKey } from '../temporal/connection';
import { guardedFetch } from '../net/guarded-fetch';
import type { NetworkGuard } from '../net/network-guard';
import type { ChatDeliveryInput, DeliveryInput, DeliveryResult, DeliveryTarget } from '../contracts/trigger-types';
import { TERMINAL_TASK_STATUSES, type TaskView } from '../contracts/session-types';

/** One attempt waits this long for the receiver's answer. */
export const DELIVERY_ATTEMPT_TIMEOUT_MS = 15_000;
/** A receiver's Retry-After is honoured up to this. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/**
 * Webhook deliveries (shared queue): one activity attempt is one POST. Temporal's retry
 * policy (set by the delivery workflow) spaces the attempts; each attempt is recorded on
 * the task or run before the activity answers, so the record shows attempts, last status
 * code and last error even while retries go on.
 */
export function createWebhookActivities(deps: { config: Config; store: Pick<Store, 'db' | 'tasks' | 'environments'>; logger: Logger; guard: NetworkGuard; watchers?: Watchers; fetch?: typeof fetch }) {
  const { config, store } = deps;
  const logger = deps.logger.child({ component: 'webhooks' });
  // Deliveries leave through the network guard: a private address is never connected to.
  const send = deps.fetch ?? guardedFetch(deps.guard);
  const secrets = new WebhookSecretsRepository(store.db);
  const runs = new TriggerRunsRepository(store.db);
  const records = new DeliveryRecords(store.db);

  const fromTask = (view: TaskView, trigger?: DeliverySubject['trigger']): DeliverySubject => ({
    sessionId: view.sessionId,
    taskId: view.taskId,
    status: view.status as DeliverySubject['status'],
    message: view.message ?? '',
    completedAt: view.completedAt ? Date.parse(view.completedAt) : Date.now(),
    envelope: taskEnvelope(fileLinks(config), view, { withCompletedAt: true }).body,
    trigger,
  });

  /** What is delivered, read from the stored outcome; null while there is none yet. */
  async function subjectOf(target: DeliveryTarget): Promise<DeliverySubject | null> {
    if (target.kind === 'task') {
      const view = await store.tasks.get(target.sessionId, target.taskId);
      return view && TERMINAL_TASK_STATUSES.includes(view.status) ? fromTask(view) : null;
    }
    const run = await runs.getById(target.runId);
    if (!run || run.status === 'running') return null;
    const trigger = { cronJobId: run.cronJobId, runId: run._id };
    if (run.sessionId && run.taskId) {
      const view = await store.tasks.get(run.sessionId, run.taskId);
      if (view && TERMINAL_TASK_STATUSES.includes(view.status)) return fromTask(view, trigger);
    }
    const completedAt = (run.finishedAt ?? run.createdAt).getTime();
    const error = run.error ?? 'The run failed';
    const code = run.code ?? 'RUN_FAILED';
    return { sessionId: run.sessionId, taskId: run.taskId, status: 'failed', message: '', completedAt, envelope: failedRunEnvelope({ sessionId: run.sessionId, taskId: run.taskId, error, code, completedAt }), trigger };
  }

  /**
   * Records an attempt's outcome on the task or run, then answers (delivered) or throws for
   * Temporal: `<kind>_REFUSED` is final, `<kind>_FAILED` is retried (after Retry-After when given).
   */
  async function settleAttempt(
    input: Pick<DeliveryInput, 'deliveryId' | 'target'>,
    attempt: number,
    result: { outcome: 'delivered' | 'final' | 'retry'; statusCode: number | null; error: string | null; retryAfterMs?: number },
    kind: 'WEBHOOK' | 'CHAT',
    log: Logger,
  ): Promise<DeliveryResult> {
    const status = result.outcome === 'delivered' ? 'delivered' : result.outcome === 'final' ? 'failed' : 'retrying';
    await records.attempt(input, { attempt, status, statusCode: result.statusCode, error: result.error });
    workerMetrics.delivery(kind === 'WEBHOOK' ? 'webhook' : 'chat', result.outcome);
    if (result.outcome === 'delivered') {
      log.info({ statusCode: result.statusCode }, `${kind.toLowerCase()} delivery made`);
      return { deliveryId: input.deliveryId, status: 'delivered', attempts: attempt, statusCode: result.statusCode };
    }
    log.warn({ statusCode: result.statusCode, error: result.error, final: result.outcome === 'final' }, `${kind.toLowerCase()} delivery attempt failed`);
    throw failureOf(
      result.outcome === 'final' ? `${kind}_REFUSED` : `${kind}_FAILED`,
      result.error ?? 'Delivery failed',
      { statusCode: result.statusCode },
      result.retryAfterMs !== undefined ? Math.min(Math.max(result.retryAfterMs, 1000), MAX_RETRY_AFTER_MS) : undefined,
    );
  }

  /** The message's text, read from the stored run or task; null while there is nothing (yet) to say. */
  async function chatText(input: ChatDeliveryInput): Promise<string | null> {
    if (input.reachOut === undefined) {
      const run = await runs.getById(input.target.runId);
      if (!run || run.status === 'running') return null;
      return run.status === 'completed'
        ? `Trigger "${input.triggerName}" finished:\n${run.result ?? ''}`
        : `Trigger "${input.triggerName}" ${run.status === 'timed_out' ? 'timed out' : 'failed'} (${run.code ?? 'RUN_FAILED'}): ${run.error ?? 'The run failed'}`;
    }
    const { sessionId, taskId } = input.target;
    const task = await store.tasks.get(sessionId, taskId);
    if (input.reachOut === 'guardrail') {
      if (task?.status !== 'guardrail_trigger' || !task.guardrail) return null;
      return guardrailText({ question: task.guardrail.value, webViewURL: `${config.PUBLIC_BASE_URL}/view/${sessionId}?token=${sessionViewToken(linkSecret(config), sessionId)}` });
    }
    return task && TERMINAL_TASK_STATUSES.includes(task.status) ? resultText(task) : null;
  }

  return {
    async deliverWebhook(input: DeliveryInput): Promise<DeliveryResult> {
      const attempt = Context.current().info.attempt;
      const log = logger.child({ deliveryId: input.deliveryId, attempt });
      await records.open(input);
      const subject = await subjectOf(input.target);
      if (!subject) {
        await records.attempt(input, { attempt, status: 'retrying', statusCode: null, error: 'The outcome to deliver is not recorded yet' });
        throw failureOf('DELIVERY_OUTCOME_MISSING', 'The outcome to deliver is not recorded yet');
      }
      const body = JSON.stringify(buildPayload(input.webhook.submittedData, subject));
      const signing = await secrets.signingSecrets(input.userId);
      const result = await sendWebhook(
        { url: input.webhook.url, auth: input.webhook.auth, deliveryId: input.deliveryId, body, secrets: signing, timeoutMs: DELIVERY_ATTEMPT_TIMEOUT_MS },
        send,
      );
      return settleAttempt(input, attempt, result, 'WEBHOOK', log.child({ ms: result.durationMs }));
    },

    /**
     * One attempt to send a message to an environment's chat connection, with the
     * environment's sealed credentials, opened only here: a trigger run's outcome
     * (deliveryMode bot), or a session's reach-out. A reach-out is sent only when nobody
     * watches the session (looked at once, on the first attempt) and only while its
     * guardrail still waits for an answer.
     */
    async deliverToChat(input: ChatDeliveryInput): Promise<DeliveryResult> {
      const attempt = Context.current().info.attempt;
      const log = logger.child({ deliveryId: input.deliveryId, attempt, environmentId: input.environmentId });
      const skipped = (why: string): DeliveryResult => {
        log.info({ sessionId: input.target.kind === 'task' ? input.target.sessionId : undefined }, `reach-out not sent: ${why}`);
        return { deliveryId: input.deliveryId, status: 'skipped', attempts: null, statusCode: null };
      };
      if (input.reachOut && attempt === 1 && deps.watchers && (await deps.watchers.watched(input.target.sessionId))) return skipped('the session is watched');
      const text = await chatText(input);
      if (text === null) {
        if (input.reachOut === 'guardrail') return skipped('the question was answered');
        await records.open(input);
        await records.attempt(input, { attempt, status: 'retrying', statusCode: null, error: 'The outcome to deliver is not recorded yet' });
        throw failureOf('DELIVERY_OUTCOME_MISSING', 'The outcome to deliver is not recorded yet');
      }
      await records.open(input);
      const env = await store.environments.get(input.environmentId, input.userId);
      if (!env?.chat) {
        const error = env ? 'The environment has no chat connection' : 'The environment no longer exists';
        await records.attempt(input, { attempt, status: 'failed', statusCode: null, error });
        throw failureOf('CHAT_NOT_CONNECTED', error);
      }
      const fields = openChatConnection(payloadKey(config), env._id, env.chat);
      const result = await sendChatMessage(env.chat.provider, fields, text, { baseUrls: config.CHAT_API_BASE_URLS, timeoutMs: DELIVERY_ATTEMPT_TIMEOUT_MS, fetch: send });
      return settleAttempt(input, attempt, result, 'CHAT', log.child({ provider: env.chat.provider }));
    },

    /** The delivery workflow gave up (final refusal or retries exhausted). */
    async recordDeliveryGivenUp({ input, error }: { input: Pick<DeliveryInput, 'deliveryId' | 'target'>; error: string }): Promise<void> {
      await records.giveUp(input, error);
      logger.warn({ deliveryId: input.deliveryId, error }, 'webhook delivery given up');
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
