import type { Collection, Db } from 'mongodb';
import { lastTakenPlace } from './id-probe';
import type { RecordedStep } from '../contracts/recording';
import type { TaskParams } from '../contracts/session-types';

export interface RecordedStepRecord extends RecordedStep {
  /** `<taskId>:<seq, 6 digits>`: a step is written once, in its place. */
  _id: string;
  taskId: string;
  sessionId: string;
  userId: string;
}

/** Steps deleted in one command. */
const DELETE_CHUNK = 500;

const stepId = (taskId: string, seq: number) => `${taskId}:${String(seq).padStart(6, '0')}`;
/** A step's document in its place; absent fields stay absent (the driver would store undefined as null). */
const stepDoc = (owner: { userId: string; sessionId: string; taskId: string }, step: RecordedStep) => ({
  _id: stepId(owner.taskId, step.seq),
  ...owner,
  ...(Object.fromEntries(Object.entries(step).filter(([, v]) => v !== undefined)) as RecordedStep),
});

/** What a recorded task was asked (secrets masked): a replay without a prompt of its own takes these. */
export interface RecordingHeader {
  prompt: string;
  startingUrl: string | null;
  outputType: TaskParams['outputType'];
  outputSchema?: TaskParams['outputSchema'];
}

interface RecordingHeaderRecord extends RecordingHeader {
  _id: string;
  userId: string;
  sessionId: string;
  createdAt: Date;
}

/** The steps of every task's recording, one document per step, and what each task was asked. */
export class RecordingsRepository {
  private readonly steps: Collection<RecordedStepRecord>;
  private readonly headers: Collection<RecordingHeaderRecord>;
  constructor(db: Db) {
    this.steps = db.collection<RecordedStepRecord>('recording_steps');
    this.headers = db.collection<RecordingHeaderRecord>('recordings');
  }

  /** Notes what the task was asked, once (a worker that takes the task over leaves it as it is). */
  async begin(owner: { userId: string; sessionId: string; taskId: string }, header: RecordingHeader): Promise<void> {
    await this.headers.updateOne({ _id: owner.taskId }, { $setOnInsert: { userId: owner.userId, sessionId: owner.sessionId, ...header, createdAt: new Date() } }, { upsert: true });
  }

  async header(taskId: string, userId: string): Promise<RecordingHeader | null> {
    const h = await this.headers.findOne({ _id: taskId, userId });
    if (!h) return null;
    return { prompt: h.prompt, startingUrl: h.startingUrl, outputType: h.outputType, ...(h.outputSchema !== undefined ? { outputSchema: h.outputSchema } : {}) };
  }

  /** Stores a step in its place; false when that place is taken (another writer got there first). */
  async add(owner: { userId: string; sessionId: string; taskId: string }, step: RecordedStep): Promise<boolean> {
    try {
      await this.steps.insertOne(stepDoc(owner, step));
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === 11000) return false;
      throw err;
    }
  }

  /**
   * Stores steps of one task in their places, in one insert: the number stored, in order,
   * before the first whose place was taken (another writer got there first).
   */
  async addMany(owner: { userId: string; sessionId: string; taskId: string }, steps: RecordedStep[]): Promise<number> {
    if (!steps.length) return 0;
    const docs = steps.map((step) => stepDoc(owner, step));
    try {
      await this.steps.insertMany(docs, { ordered: true });
      return docs.length;
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
      // The steps before the refused one are stored (an ordered insert stops at the first error).
      const { writeErrors: refused, insertedCount } = err as { writeErrors?: { index: number }[] | { index: number }; insertedCount?: number };
      const first = Array.isArray(refused) ? refused[0]?.index : refused?.index;
      return typeof first === 'number' ? first : (insertedCount ?? 0);
    }
  }

  /** The next free place of a task's recording (a worker that took the session over goes on from there). */
  async nextSeq(taskId: string): Promise<number> {
    // Steps are stored under their place (`_id`), without gaps: found by lookups by `_id`,
    // never by a query on another field (the embedded FerretDB reads every task's steps).
    return 1 + (await lastTakenPlace(async (seq) => (await this.steps.findOne({ _id: stepId(taskId, seq) }, { projection: { _id: 1 } })) !== null, 0));
  }

  /**
   * Deletes a task's recording whoever owns it (the records' retention): its steps by `_id`,
   * the last first, so what an interrupted pass leaves is still a recording without gaps, then
   * what it was asked. The number of steps removed.
   */
  async deleteOfTask(taskId: string): Promise<number> {
    let deleted = 0;
    for (let high = (await this.nextSeq(taskId)) - 1; high >= 0; high -= DELETE_CHUNK) {
      const low = Math.max(0, high - DELETE_CHUNK + 1);
      const ops = Array.from({ length: high - low + 1 }, (_, i) => ({ deleteOne: { filter: { _id: stepId(taskId, high - i) } } }));
      deleted += (await this.steps.bulkWrite(ops, { ordered: true })).deletedCount;
    }
    await this.headers.deleteOne({ _id: taskId });
    return deleted;
  }

  /** Deletes a task's recording (its steps and what it was asked); the number of steps removed. */
  async delete(taskId: string, userId: string): Promise<number> {
    const { deletedCount } = await this.steps.deleteMany({ taskId, userId });
    await this.headers.deleteOne({ _id: taskId, userId });
    return deletedCount;
  }

  /** A task's steps in order (the owner's only). */
  async list(taskId: string, userId: string, limit = 2_000): Promise<RecordedStep[]> {
    const docs = await this.steps.find({ taskId, userId }).sort({ seq: 1 }).limit(limit).toArray();
    return docs.map(({ _id, taskId: _t, sessionId: _s, userId: _u, ...step }) => step);
  }
}
