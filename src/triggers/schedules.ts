/**
 * The Temporal Schedule behind each trigger: created, updated in place, paused,
 * unpaused, triggered and deleted with the trigger. Its action starts the run workflow on
 * the shared queue; every action is allowed to start (ALLOW_ALL) because the run itself
 * records an overlapping run as `skipped`, which a skipped schedule action would not.
 */
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptionsStartWorkflowAction, type ScheduleUpdateOptions } from '@temporalio/client';
import type { CronJobRecord } from '../contracts/cron-job-record';
import { OwnerUserIdKey, TriggerIdKey } from '../contracts/search-attributes';
import { TRIGGER_RUN_WORKFLOW, triggerRunWorkflowId, triggerScheduleId, type TriggerRunInput } from '../contracts/trigger-types';
import { toTemporalRetry } from '../contracts/retry-policy';
import { toScheduleSpec } from '../contracts/schedule-spec';

/** Runs missed while Temporal itself was down are still started if this late. */
const CATCHUP_WINDOW = '10 minutes';

export class TriggerSchedules {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  private handle(triggerId: string) {
    return this.client.schedule.getHandle(triggerScheduleId(triggerId));
  }

  private attributes(job: CronJobRecord) {
    return [
      { key: OwnerUserIdKey, value: job.userId },
      { key: TriggerIdKey, value: job._id },
    ];
  }

  private action(job: CronJobRecord): ScheduleOptionsStartWorkflowAction<(input: TriggerRunInput) => Promise<unknown>> {
    return {
      type: 'startWorkflow',
      workflowType: TRIGGER_RUN_WORKFLOW,
      workflowId: triggerRunWorkflowId(job._id),
      taskQueue: this.taskQueue,
      args: [{ triggerId: job._id }],
      retry: toTemporalRetry(job.retryPolicy),
      typedSearchAttributes: this.attributes(job),
      memo: { userId: job.userId, triggerId: job._id },
    };
  }

  async create(job: CronJobRecord): Promise<void> {
    await this.client.schedule.create({
      scheduleId: triggerScheduleId(job._id),
      spec: toScheduleSpec(job),
      action: this.action(job),
      policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL, catchupWindow: CATCHUP_WINDOW, pauseOnFailure: false },
      memo: { userId: job.userId, triggerId: job._id, name: job.name },
      typedSearchAttributes: this.attributes(job),
      state: { paused: job.status === 'paused', note: job.status === 'paused' ? 'Created paused' : undefined },
    });
  }

  /** Spec and action replaced in place (same schedule id, its history and state kept). */
  async update(job: CronJobRecord): Promise<void> {
    await this.handle(job._id).update(
      (prev): ScheduleUpdateOptions<ScheduleOptionsStartWorkflowAction<(input: TriggerRunInput) => Promise<unknown>>> => ({
        spec: toScheduleSpec(job),
        action: this.action(job),
        policies: { overlap: prev.policies.overlap, catchupWindow: prev.policies.catchupWindow, pauseOnFailure: prev.policies.pauseOnFailure },
        state: { paused: prev.state.paused, note: prev.state.note, remainingActions: prev.state.remainingActions },
        typedSearchAttributes: this.attributes(job),
      }),
    );
  }

  /** Deletes the schedule; one that is already gone is fine. */
  async delete(triggerId: string): Promise<void> {
    try {
      await this.handle(triggerId).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  }

  pause(triggerId: string, note: string): Promise<void> {
    return this.handle(triggerId).pause(note);
  }

  unpause(triggerId: string, note: string): Promise<void> {
    return this.handle(triggerId).unpause(note);
  }

  /** Runs now, in the background; the schedule's next action times are not affected. */
  trigger(triggerId: string): Promise<void> {
    return this.handle(triggerId).trigger(ScheduleOverlapPolicy.ALLOW_ALL);
  }

  /** The next run time from the schedule's own description; null when paused or nothing is left to run. */
  async nextRunAt(triggerId: string): Promise<Date | null> {
    const desc = await this.handle(triggerId).describe();
    if (desc.state.paused) return null;
    return desc.info.nextActionTimes[0] ?? null;
  }
}
