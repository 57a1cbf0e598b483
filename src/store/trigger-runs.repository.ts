import type { Collection, Db, Filter } from 'mongodb';
import { isDuplicateKey } from './doc-locks';
import { afterCursor, encodeCursor, type CursorKey } from '../contracts/cursor';
import type { RunStatus } from '../contracts/trigger-types';
import type { Usage } from '../contracts/session-types';

/** One delivery of a task's or a run's outcome, with its attempts (stored under `deliveries.<deliveryId>`). */
export interface DeliveryRecord {
  deliveryId: string;
  channel: 'webhook' | 'bot';
  name: string | null;
  url: string | null;
  submittedData: string | null;
  status: 'pending' | 'retrying' | 'delivered' | 'failed' | 'unsupported';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
}

/** One run of a trigger (decisions.md: the run record). */
export interface TriggerRunRecord {
  _id: string;
  cronJobId: string;
  userId: string;
  status: RunStatus;
  scheduledAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  sessionId: string | null;
  taskId: string | null;
  result: string | null;
  error: string | null;
  code: string | null;
  usage: Usage | null;
  /** Keyed by delivery id (single-document updates of one entry); shown as an array. */
  deliveries: Record<string, DeliveryRecord>;
  attempt: number;
  workflowId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

type NewRun = { id: string; cronJobId: string; userId: string; attempt: number; scheduledAt: Date | null; workflowId: string };

export class TriggerRunsRepository {
  private readonly runs: Collection<TriggerRunRecord>;
  constructor(db: Db) {
    this.runs = db.collection<TriggerRunRecord>('triggerRuns');
  }

  /** Records the start of an attempt; the first attempt creates the record, later ones move `attempt` on. */
  async begin(run: NewRun, now = new Date()): Promise<void> {
    const created = await this.insertOnce({ ...this.blank(run, now), status: 'running', startedAt: now });
    if (!created) await this.runs.updateOne({ _id: run.id }, { $set: { status: 'running', attempt: run.attempt, workflowId: run.workflowId, updatedAt: now } });
  }

  /** A run that found another run of its trigger still going: recorded, not started. */
  async recordSkipped(run: NewRun, reason: string, now = new Date()): Promise<void> {
    await this.insertOnce({ ...this.blank(run, now), status: 'skipped', finishedAt: now, error: reason, code: 'RUN_OVERLAP' });
  }

  private blank(run: NewRun, now: Date): TriggerRunRecord {
    return {
      _id: run.id,
      cronJobId: run.cronJobId,
      userId: run.userId,
      status: 'running',
      scheduledAt: run.scheduledAt,
      startedAt: null,
      finishedAt: null,
      sessionId: null,
      taskId: null,
      result: null,
      error: null,
      code: null,
      usage: null,
      deliveries: {},
      attempt: run.attempt,
      workflowId: run.workflowId,
      createdAt: now,
      updatedAt: now,
    };
  }

  /**
   * Inserts the record unless it exists (a retried activity). An insert, not an upsert
   * with $setOnInsert: FerretDB drops the null fields of $setOnInsert.
   */
  private async insertOnce(record: TriggerRunRecord): Promise<boolean> {
    try {
      await this.runs.insertOne(record);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async setSession(id: string, sessionId: string, taskId: string): Promise<void> {
    await this.runs.updateOne({ _id: id }, { $set: { sessionId, taskId, updatedAt: new Date() } });
  }

  /** An attempt failed and another follows: the error is kept, the run stays `running`. */
  async recordAttemptFailure(id: string, failure: { code: string; error: string }): Promise<void> {
    await this.runs.updateOne({ _id: id, status: 'running' }, { $set: { code: failure.code, error: failure.error, updatedAt: new Date() } });
  }

  /** The task of the trigger's newest completed run (a replaying trigger repeats it). */
  async lastCompletedTaskId(cronJobId: string): Promise<string | null> {
    const run = await this.runs.find({ cronJobId, status: 'completed', taskId: { $ne: null } }, { projection: { taskId: 1 } }).sort({ createdAt: -1, _id: -1 }).limit(1).next();
    return run?.taskId ?? null;
  }

  async finish(id: string, outcome: { status: RunStatus; result: string | null; error: string | null; code: string | null; usage: Usage | null; sessionId?: string | null; taskId?: string | null }, now = new Date()): Promise<void> {
    const { sessionId, taskId, ...rest } = outcome;
    await this.runs.updateOne(
      { _id: id },
      { $set: { ...rest, ...(sessionId !== undefined ? { sessionId } : {}), ...(taskId !== undefined ? { taskId } : {}), finishedAt: now, updatedAt: now } },
    );
  }

  /** A run whose workflow vanished (its overlap lock expired): it is failed, so it does not show as running forever. */
  async markAbandoned(id: string): Promise<void> {
    const now = new Date();
    await this.runs.updateOne({ _id: id, status: 'running' }, { $set: { status: 'failed', code: 'RUN_ABANDONED', error: 'The run stopped without finishing', finishedAt: now, updatedAt: now } });
  }

  get(cronJobId: string, id: string): Promise<TriggerRunRecord | null> {
    return this.runs.findOne({ _id: id, cronJobId });
  }

  getById(id: string): Promise<TriggerRunRecord | null> {
    return this.runs.findOne({ _id: id });
  }

  recent(cronJobId: string, limit: number): Promise<TriggerRunRecord[]> {
    return this.runs.find({ cronJobId }).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
  }

  /** One page, newest first; `nextCursor` is null on the last page. */
  async page(cronJobId: string, opts: { limit: number; after?: CursorKey }): Promise<{ runs: TriggerRunRecord[]; nextCursor: string | null }> {
    const filter: Filter<TriggerRunRecord> = opts.after ? ({ cronJobId, ...afterCursor(opts.after) } as Filter<TriggerRunRecord>) : { cronJobId };
    const found = await this.runs.find(filter).sort({ createdAt: -1, _id: -1 }).limit(opts.limit + 1).toArray();
    const runs = found.slice(0, opts.limit);
    const last = runs[runs.length - 1];
    return { runs, nextCursor: found.length > opts.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last._id }) : null };
  }

  async deleteForJob(cronJobId: string): Promise<number> {
    return (await this.runs.deleteMany({ cronJobId })).deletedCount;
  }

  /** Deletes runs that finished before `before` (the records' retention), at most `limit`; how many went. */
  async deleteFinishedBefore(before: Date, limit: number): Promise<number> {
    const docs = await this.runs.find({ finishedAt: { $ne: null, $lt: before } }, { projection: { _id: 1 } }).limit(limit).toArray();
    if (!docs.length) return 0;
    return (await this.runs.bulkWrite(docs.map(({ _id }) => ({ deleteOne: { filter: { _id } } })), { ordered: false })).deletedCount;
  }

  /** Adds (or keeps) a delivery entry of the run. */
  async addDelivery(id: string, delivery: DeliveryRecord): Promise<void> {
    await this.runs.updateOne({ _id: id, [`deliveries.${delivery.deliveryId}`]: { $exists: false } }, { $set: { [`deliveries.${delivery.deliveryId}`]: delivery, updatedAt: new Date() } });
  }
}
