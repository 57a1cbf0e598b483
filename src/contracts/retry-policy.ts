/**
 * A trigger's `retryPolicy` (decisions.md: maximumAttempts, initialIntervalMs,
 * backoffCoefficient, maximumIntervalMs) as the Temporal retry policy of its run
 * workflow: a failed run is attempted again by Temporal with that backoff.
 */
import type { RetryPolicy } from '@temporalio/common';

export interface RetryPolicyInput {
  maximumAttempts: number;
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
}

export const RETRY_LIMITS = {
  maximumAttempts: { min: 1, max: 10, default: 3 },
  initialIntervalMs: { min: 1000, max: 3_600_000, default: 30_000 },
  backoffCoefficient: { min: 1, max: 10, default: 2 },
  maximumIntervalMs: { min: 1000, max: 3_600_000, default: 600_000 },
} as const;

/** Without a policy a run is attempted once. */
export function toTemporalRetry(policy: RetryPolicyInput | null): RetryPolicy | undefined {
  if (!policy) return undefined;
  return {
    maximumAttempts: policy.maximumAttempts,
    initialInterval: policy.initialIntervalMs,
    backoffCoefficient: policy.backoffCoefficient,
    maximumInterval: Math.max(policy.maximumIntervalMs, policy.initialIntervalMs),
  };
}

/** How long the overlap lock of a run lasts if its workflow vanishes: a task's longest life plus the longest wait between attempts. */
export function runLeaseMs(policy: RetryPolicyInput | null): number {
  const TASK_AND_SESSION_MS = 20 * 60_000;
  return TASK_AND_SESSION_MS + (policy ? Math.max(policy.maximumIntervalMs, policy.initialIntervalMs) : 0);
}
