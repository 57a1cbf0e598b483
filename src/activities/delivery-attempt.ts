import { failureOf } from '../contracts/errors';
import type { DeliveryInput, DeliveryResult } from '../contracts/trigger-types';
import type { Logger } from '../logger';
import { workerMetrics } from '../metrics/worker-metrics';
import type { DeliveryContext } from './delivery-context';

/** A receiver's Retry-After is honoured up to this. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/** What one attempt to deliver came to. */
export interface AttemptResult {
  outcome: 'delivered' | 'final' | 'retry';
  statusCode: number | null;
  error: string | null;
  retryAfterMs?: number;
}

/**
 * Records an attempt's outcome on the task or run, then answers (delivered) or throws for
 * Temporal: `<kind>_REFUSED` is final, `<kind>_FAILED` is retried (after Retry-After when given).
 */
export async function settleAttempt(
  ctx: DeliveryContext,
  input: Pick<DeliveryInput, 'deliveryId' | 'target'>,
  attempt: number,
  result: AttemptResult,
  kind: 'WEBHOOK' | 'CHAT',
  log: Logger,
): Promise<DeliveryResult> {
  const status = result.outcome === 'delivered' ? 'delivered' : result.outcome === 'final' ? 'failed' : 'retrying';
  await ctx.records.attempt(input, { attempt, status, statusCode: result.statusCode, error: result.error });
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

/** The outcome to deliver is not recorded yet: the attempt is recorded as retrying, and Temporal tries again. */
export async function outcomeMissing(ctx: DeliveryContext, input: Pick<DeliveryInput, 'deliveryId' | 'target'>, attempt: number): Promise<never> {
  await ctx.records.attempt(input, { attempt, status: 'retrying', statusCode: null, error: 'The outcome to deliver is not recorded yet' });
  throw failureOf('DELIVERY_OUTCOME_MISSING', 'The outcome to deliver is not recorded yet');
}
