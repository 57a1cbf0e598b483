import type { Collection, Db } from 'mongodb';
import type { TaskView } from '../contracts/session-types';

export interface TaskRecord extends Omit<TaskView, 'createdAt' | 'completedAt'> {
  _id: string;
  userId: string;
  createdAt: Date;
  completedAt?: Date;
  updatedAt: Date;
}

export class TasksRepository {
  private readonly tasks: Collection<TaskRecord>;
  constructor(db: Db) {
    this.tasks = db.collection<TaskRecord>('tasks');
  }

  async save(userId: string, view: TaskView): Promise<void> {
    const { createdAt, completedAt, ...rest } = view;
    await this.tasks.updateOne(
      { _id: view.taskId },
      {
        $set: { ...rest, userId, createdAt: new Date(createdAt), updatedAt: new Date(), ...(completedAt ? { completedAt: new Date(completedAt) } : {}) },
      },
      { upsert: true },
    );
  }

  /** What the task's pages downloaded and requested, stored beside the record. */
  async saveArtifacts(taskId: string, artifacts: { files: TaskView['files']; network: TaskView['network'] }): Promise<void> {
    await this.tasks.updateOne({ _id: taskId }, { $set: { files: artifacts.files, network: artifacts.network, updatedAt: new Date() } });
  }

  /** The session ended without its workflow finishing its tasks: the unfinished ones fail with `code`. */
  async failUnfinished(sessionId: string, code: string, error: string, now = new Date()): Promise<number> {
    const res = await this.tasks.updateMany(
      { sessionId, status: { $in: ['running', 'paused', 'guardrail_trigger'] } },
      { $set: { status: 'failed', code, error, completedAt: now, updatedAt: now } },
    );
    return res.modifiedCount;
  }

  /**
   * The record by `_id` alone, its other fields compared here: FerretDB hands only a filter
   * on `_id` alone to SQLite and reads every record in the collection for any other.
   */
  private async byId(taskId: string, also: Partial<Pick<TaskRecord, 'sessionId' | 'userId'>>): Promise<TaskRecord | null> {
    const rec = await this.tasks.findOne({ _id: taskId });
    if (!rec || (also.sessionId !== undefined && rec.sessionId !== also.sessionId) || (also.userId !== undefined && rec.userId !== also.userId)) return null;
    return rec;
  }

  async get(sessionId: string, taskId: string): Promise<TaskView | null> {
    const rec = await this.byId(taskId, { sessionId });
    if (!rec) return null;
    const { _id, userId: _u, updatedAt: _up, createdAt, completedAt, replayRoot: _root, ...rest } = rec;
    return { ...rest, taskId: _id, createdAt: createdAt.toISOString(), completedAt: completedAt?.toISOString() };
  }

  /** The owner and status of a session's task (for pages signed for it, which carry no key). */
  async ownerOf(sessionId: string, taskId: string): Promise<{ userId: string; status: string } | null> {
    const rec = await this.byId(taskId, { sessionId });
    return rec ? { userId: rec.userId, status: rec.status } : null;
  }

  /** One of the user's tasks, in any session (null for another user's). */
  async owned(userId: string, taskId: string): Promise<Pick<TaskRecord, '_id' | 'sessionId' | 'status' | 'replayRoot'> | null> {
    const rec = await this.byId(taskId, { userId });
    return rec && { _id: rec._id, sessionId: rec.sessionId, status: rec.status, ...(rec.replayRoot !== undefined ? { replayRoot: rec.replayRoot } : {}) };
  }

  /**
   * The newest completed task of a replay line: the first recorded task (`root`) and every
   * replay of it. A replay that had to be repaired is newer than what it replayed, so the next
   * replay performs the repaired steps.
   */
  async newestOfLine(userId: string, root: string): Promise<string | null> {
    const rec = await this.tasks
      .find({ userId, status: 'task_completed', $or: [{ _id: root }, { replayRoot: root }] }, { projection: { _id: 1 } })
      .sort({ completedAt: -1, _id: -1 })
      .limit(1)
      .next();
    return rec?._id ?? null;
  }

  /** Ids of a user's recorded tasks in one session, oldest first. */
  async idsOfSession(userId: string, sessionId: string): Promise<string[]> {
    const docs = await this.tasks.find({ userId, sessionId }, { projection: { _id: 1 } }).sort({ createdAt: 1 }).limit(100).toArray();
    return docs.map((d) => d._id);
  }

  /** Ids of the tasks of any of `sessionIds` (one read for them all). */
  async idsOfSessions(sessionIds: string[]): Promise<string[]> {
    if (!sessionIds.length) return [];
    const docs = await this.tasks.find({ sessionId: { $in: sessionIds } }, { projection: { _id: 1 } }).toArray();
    return docs.map((d) => d._id);
  }

  /** Deletes task records by `_id`, one command for them all. */
  async deleteMany(ids: string[]): Promise<number> {
    if (!ids.length) return 0;
    return (await this.tasks.bulkWrite(ids.map((_id) => ({ deleteOne: { filter: { _id } } })), { ordered: false })).deletedCount;
  }
}
