/** A trigger (cron job) as the store keeps it and the API shows it. */
import type { RetryPolicyInput } from './retry-policy';
import type { ScheduleType } from './schedule-spec';
import type { DeliveryMode, RunStatus, TriggerOutputType, WebhookConfig } from './trigger-types';

export type CronJobStatus = 'active' | 'paused';

/** A trigger (the wire calls it a cron job). Its schedule lives in Temporal; this is the record the API shows. */
export interface CronJobRecord {
  _id: string;
  userId: string;
  name: string;
  description: string;
  environmentId: string;
  policyId: string | null;
  scheduleType: ScheduleType;
  scheduleAt: Date | null;
  scheduleInterval: string | null;
  scheduleCron: string | null;
  timezone: string;
  prompt: string;
  startingUrl: string | null;
  outputType: TriggerOutputType;
  /** JSON text: schemas may carry `$`-prefixed keys a document field name cannot. */
  outputSchema: string | null;
  deliveryMode: DeliveryMode;
  webhook: WebhookConfig | null;
  retryPolicy: RetryPolicyInput | null;
  maxConsecutiveFailures: number;
  /** Most USD each run may cost (absent on triggers made before: no cap). */
  maxCost?: number | null;
  /** Each run replays the recording of the last successful run (absent on triggers made before: false). */
  replay?: boolean;
  status: CronJobStatus;
  /** Why it is paused: the owner, or the failures (auto-pause). */
  pausedBy: 'user' | 'failures' | null;
  nextRunAt: Date | null;
  consecutiveFailures: number;
  /** The last run whose failure was counted (a retried activity counts it once). */
  lastCountedRunId: string | null;
  lastRunAt: Date | null;
  lastRunStatus: RunStatus | null;
  /** The run in progress (overlap lock), and when the lock lapses if that run vanished. */
  runningRunId: string | null;
  runningUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The fields a user sets (create and update). */
export type CronJobFields = Pick<
  CronJobRecord,
  | 'name'
  | 'description'
  | 'environmentId'
  | 'policyId'
  | 'scheduleType'
  | 'scheduleAt'
  | 'scheduleInterval'
  | 'scheduleCron'
  | 'timezone'
  | 'prompt'
  | 'startingUrl'
  | 'outputType'
  | 'outputSchema'
  | 'deliveryMode'
  | 'webhook'
  | 'retryPolicy'
  | 'maxConsecutiveFailures'
  | 'maxCost'
  | 'replay'
>;

/**
 * Trigger records. FerretDB has no transactions: every state change (status, the
 * overlap lock, the failure counter) is one conditional single-document update.
 */
