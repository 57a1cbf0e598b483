import { Context } from '@temporalio/activity';
import type { ChatDeliveryInput, DeliveryInput, DeliveryResult } from '../contracts/trigger-types';
import { buildPayload } from '../webhooks/payloads';
import { sendWebhook } from '../webhooks/sender';
import { deliverToChat } from './chat-delivery';
import { outcomeMissing, settleAttempt } from './delivery-attempt';
import { DELIVERY_ATTEMPT_TIMEOUT_MS, deliveryContext, type DeliveryActivitiesDeps, type DeliveryContext } from './delivery-context';
import { subjectOf } from './delivery-subject';

export { DELIVERY_ATTEMPT_TIMEOUT_MS } from './delivery-context';

/**
 * Webhook deliveries (shared queue): one activity attempt is one POST. Temporal's retry
 * policy (set by the delivery workflow) spaces the attempts; each attempt is recorded on
 * the task or run before the activity answers, so the record shows attempts, last status
 * code and last error even while retries go on.
 */
export function createWebhookActivities(deps: DeliveryActivitiesDeps) {
  const ctx = deliveryContext(deps);
  return {
    async deliverWebhook(input: DeliveryInput): Promise<DeliveryResult> {
      return deliverWebhook(ctx, input);
    },

    /** One attempt to send a message to an environment's chat connection (./chat-delivery.ts). */
    async deliverToChat(input: ChatDeliveryInput): Promise<DeliveryResult> {
      return deliverToChat(ctx, input);
    },

    /** The delivery workflow gave up (final refusal or retries exhausted). */
    async recordDeliveryGivenUp({ input, error }: { input: Pick<DeliveryInput, 'deliveryId' | 'target'>; error: string }): Promise<void> {
      await ctx.records.giveUp(input, error);
      ctx.logger.warn({ deliveryId: input.deliveryId, error }, 'webhook delivery given up');
    },
  };
}

/** One POST of the outcome to the webhook, signed with the owner's signing secrets. */
async function deliverWebhook(ctx: DeliveryContext, input: DeliveryInput): Promise<DeliveryResult> {
  const attempt = Context.current().info.attempt;
  const log = ctx.logger.child({ deliveryId: input.deliveryId, attempt });
  await ctx.records.open(input);
  const subject = await subjectOf(ctx, input.target);
  if (!subject) return outcomeMissing(ctx, input, attempt);
  const body = JSON.stringify(buildPayload(input.webhook.submittedData, subject));
  const signing = await ctx.secrets.signingSecrets(input.userId);
  const result = await sendWebhook(
    { url: input.webhook.url, auth: input.webhook.auth, deliveryId: input.deliveryId, body, secrets: signing, timeoutMs: DELIVERY_ATTEMPT_TIMEOUT_MS },
    ctx.send,
  );
  return settleAttempt(ctx, input, attempt, result, 'WEBHOOK', log.child({ ms: result.durationMs }));
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
