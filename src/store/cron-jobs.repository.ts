import type { Collection, Db } from 'mongodb';
import type { CronJobFields, CronJobRecord, CronJobStatus } from '../contracts/cron-job-record';
import type { RunStatus } from '../contracts/trigger-types';
import { newId } from './ids';

export class CronJobsRepository {
  private readonly jobs: Collection<CronJobRecord>;
  constructor(private readonly db: Db) {
    this.jobs = db.collection<CronJobRecord>('cronJobs');
  }

  /** Inserts within the per-user limit; null when the user has `limit` already. */
  async create(userId: string, fields: CronJobFields, status: CronJobStatus, limit: number): Promise<CronJobRecord | null> {
    if ((await this.jobs.countDocuments({ userId })) >= limit) return null;
    const now = new Date();
    const record: CronJobRecord = {
      ...fields,
      _id: newId('cron'),
      userId,
      status,
      pausedBy: status === 'paused' ? 'user' : null,
      nextRunAt: null,
      consecutiveFailures: 0,
      lastCountedRunId: null,
      lastRunAt: null,
      lastRunStatus: null,
      runningRunId: null,
      runningUntil: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.jobs.insertOne(record);
    // Two creates racing past the count: the later one steps back, so the limit holds.
    const count = await this.jobs.countDocuments({ userId });
    if (count > limit) {
      const newer = await this.jobs.countDocuments({ userId, $or: [{ createdAt: { $gt: now } }, { createdAt: now, _id: { $gt: record._id } }] });
      if (count - newer > limit) {
        await this.jobs.deleteOne({ _id: record._id });
        return null;
      }
    }
    return record;
  }

  get(id: string, userId: string): Promise<CronJobRecord | null> {
    return this.jobs.findOne({ _id: id, userId });
  }

  getById(id: string): Promise<CronJobRecord | null> {
    return this.jobs.findOne({ _id: id });
  }

  list(userId: string): Promise<CronJobRecord[]> {
    return this.jobs.find({ userId }).sort({ createdAt: -1, _id: -1 }).toArray();
  }

  async update(id: string, userId: string, fields: Partial<CronJobRecord>): Promise<CronJobRecord | null> {
    return this.jobs.findOneAndUpdate({ _id: id, userId }, { $set: { ...fields, updatedAt: new Date() } }, { returnDocument: 'after' });
  }

  async remove(id: string, userId: string): Promise<CronJobRecord | null> {
    return this.jobs.findOneAndDelete({ _id: id, userId });
  }

  /** Moves the status only from `from`; null when it was not `from` (someone else moved it). */
  async transition(id: string, userId: string, from: CronJobStatus, to: CronJobStatus, extra: Partial<CronJobRecord> = {}): Promise<CronJobRecord | null> {
    return this.jobs.findOneAndUpdate({ _id: id, userId, status: from }, { $set: { status: to, ...extra, updatedAt: new Date() } }, { returnDocument: 'after' });
  }

  async setNextRunAt(id: string, nextRunAt: Date | null): Promise<void> {
    await this.jobs.updateOne({ _id: id }, { $set: { nextRunAt } });
  }

  /**
   * Takes the trigger's overlap lock for a run: free, already this run's (a retry), or
   * lapsed. Answers the run that held it before (a lapsed one), or 'busy'.
   */
  async acquireRunLock(id: string, runId: string, leaseMs: number, now = new Date()): Promise<{ acquired: true; previous: string | null } | { acquired: false; holder: string | null }> {
    const before = await this.jobs.findOneAndUpdate(
      { _id: id, $or: [{ runningRunId: null }, { runningRunId: runId }, { runningUntil: { $lt: now } }] },
      { $set: { runningRunId: runId, runningUntil: new Date(now.getTime() + leaseMs), lastRunAt: now } },
      { returnDocument: 'before' },
    );
    if (before) return { acquired: true, previous: before.runningRunId && before.runningRunId !== runId ? before.runningRunId : null };
    const current = await this.jobs.findOne({ _id: id }, { projection: { runningRunId: 1 } });
    return { acquired: false, holder: current?.runningRunId ?? null };
  }

  async extendRunLock(id: string, runId: string, leaseMs: number): Promise<void> {
    await this.jobs.updateOne({ _id: id, runningRunId: runId }, { $set: { runningUntil: new Date(Date.now() + leaseMs) } });
  }

  async releaseRunLock(id: string, runId: string, lastRunStatus: RunStatus): Promise<void> {
    await this.jobs.updateOne({ _id: id, runningRunId: runId }, { $set: { runningRunId: null, runningUntil: null, lastRunStatus } });
  }

  /** Counts a failed run once (keyed by run id); answers the record after. */
  async countFailure(id: string, runId: string): Promise<CronJobRecord | null> {
    const counted = await this.jobs.findOneAndUpdate(
      { _id: id, lastCountedRunId: { $ne: runId } },
      { $inc: { consecutiveFailures: 1 }, $set: { lastCountedRunId: runId } },
      { returnDocument: 'after' },
    );
    return counted ?? this.getById(id);
  }

  async resetFailures(id: string, runId: string): Promise<void> {
    await this.jobs.updateOne({ _id: id }, { $set: { consecutiveFailures: 0, lastCountedRunId: runId } });
  }

  /** Pauses an active trigger that reached its failure limit; true for the call that paused it. */
  async autoPause(id: string): Promise<boolean> {
    const res = await this.jobs.updateOne({ _id: id, status: 'active' }, { $set: { status: 'paused', pausedBy: 'failures', nextRunAt: null, updatedAt: new Date() } });
    return res.modifiedCount === 1;
  }

  /** Whether the environment exists and is the user's (environments are another module's records). */
  async environmentExists(environmentId: string, userId: string): Promise<boolean> {
    return (await this.db.collection<{ _id: string; userId: string }>('environments').countDocuments({ _id: environmentId, userId }, { limit: 1 })) > 0;
  }
}
