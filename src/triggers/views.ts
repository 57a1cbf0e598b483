/** Triggers and their runs as the API shows them (dates in ISO 8601). */
import type { CronJobRecord } from '../contracts/cron-job-record';
import type { DeliveryRecord, TriggerRunRecord } from '../store/trigger-runs.repository';

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/**
 * A webhook's `auth` as views show it: never in clear, the last four characters of a long
 * value only (as chat connection secrets are shown).
 */
export function maskedAuth(auth: string): string {
  return auth.length >= 16 ? `****${auth.slice(-4)}` : '****';
}

function webhookView(webhook: CronJobRecord['webhook']): CronJobRecord['webhook'] {
  if (!webhook?.auth) return webhook;
  return { ...webhook, auth: maskedAuth(webhook.auth) };
}

export function cronJobView(job: CronJobRecord) {
  return {
    _id: job._id,
    userId: job.userId,
    name: job.name,
    description: job.description,
    environmentId: job.environmentId,
    policyId: job.policyId,
    scheduleType: job.scheduleType,
    scheduleAt: iso(job.scheduleAt),
    scheduleInterval: job.scheduleInterval,
    scheduleCron: job.scheduleCron,
    timezone: job.timezone,
    prompt: job.prompt,
    startingUrl: job.startingUrl,
    outputType: job.outputType,
    outputSchema: job.outputSchema ? (JSON.parse(job.outputSchema) as Record<string, unknown>) : null,
    deliveryMode: job.deliveryMode,
    webhook: webhookView(job.webhook),
    retryPolicy: job.retryPolicy,
    maxConsecutiveFailures: job.maxConsecutiveFailures,
    maxCost: job.maxCost ?? null,
    replay: job.replay === true,
    status: job.status,
    pausedBy: job.status === 'paused' ? job.pausedBy : null,
    nextRunAt: iso(job.nextRunAt),
    consecutiveFailures: job.consecutiveFailures,
    lastRunAt: iso(job.lastRunAt),
    lastRunStatus: job.lastRunStatus,
    createdAt: iso(job.createdAt),
    updatedAt: iso(job.updatedAt),
  };
}

export function deliveryView(d: DeliveryRecord) {
  return {
    deliveryId: d.deliveryId,
    channel: d.channel,
    name: d.name,
    url: d.url,
    submittedData: d.submittedData,
    status: d.status,
    attempts: d.attempts,
    lastStatusCode: d.lastStatusCode ?? null,
    lastError: d.lastError ?? null,
    lastAttemptAt: iso(d.lastAttemptAt),
    deliveredAt: iso(d.deliveredAt),
    createdAt: iso(d.createdAt),
  };
}

export function runView(run: TriggerRunRecord) {
  return {
    _id: run._id,
    cronJobId: run.cronJobId,
    status: run.status,
    scheduledAt: iso(run.scheduledAt),
    startedAt: iso(run.startedAt),
    finishedAt: iso(run.finishedAt),
    sessionId: run.sessionId ?? null,
    taskId: run.taskId ?? null,
    result: run.result ?? null,
    error: run.error ?? null,
    code: run.code ?? null,
    usage: run.usage ?? null,
    deliveries: Object.values(run.deliveries ?? {})
      .sort((a, b) => (a.createdAt?.getTime() ?? 0) - (b.createdAt?.getTime() ?? 0))
      .map(deliveryView),
    attempt: run.attempt,
    createdAt: iso(run.createdAt),
  };
}
