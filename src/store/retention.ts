import type { Store } from './store';
import { removeSavedState } from './saved-state';
import { TriggerRunsRepository } from './trigger-runs.repository';

/** Ended sessions one pass deletes with everything of theirs (the next pass takes the rest). */
export const RETENTION_BATCH = 200;

export interface RetentionSweepResult {
  sessions: number;
  tasks: number;
  steps: number;
  pictures: number;
  events: number;
  triggerRuns: number;
}

/**
 * One pass of the records' retention: sessions that ended (completed, terminated, expired,
 * failed) before `cutoff`, at most `batch` of them, with their tasks, the tasks' recordings
 * and step pictures (with their blobs), the sessions' events and saved state; and trigger
 * runs that finished before `cutoff`. Live sessions are never touched.
 *
 * Children go before what owns them and the session record last, each by `_id`: a pass that
 * stops half-way leaves records that still read as they are (a recording without gaps, a task
 * without pictures), and the next pass finds the session again and finishes. Every process's
 * sweeper may run it; each step is idempotent.
 */
export async function runRetentionSweep(
  store: Pick<Store, 'db' | 'sessions' | 'tasks' | 'recordings' | 'files' | 'events'>,
  cutoff: Date,
  opts: { batch?: number } = {},
): Promise<RetentionSweepResult> {
  const batch = opts.batch ?? RETENTION_BATCH;
  const triggerRuns = await new TriggerRunsRepository(store.db).deleteFinishedBefore(cutoff, batch);
  const sessionIds = await store.sessions.endedBefore(cutoff, batch);
  if (!sessionIds.length) return { sessions: 0, tasks: 0, steps: 0, pictures: 0, events: 0, triggerRuns };
  const taskIds = await store.tasks.idsOfSessions(sessionIds);
  const pictures = await store.files.deletePicturesOfTasks(taskIds);
  let steps = 0;
  for (const taskId of taskIds) steps += await store.recordings.deleteOfTask(taskId);
  const tasks = await store.tasks.deleteMany(taskIds);
  let events = 0;
  for (const sessionId of sessionIds) {
    events += await store.events.deleteSession(sessionId);
    await removeSavedState(store.db, sessionId);
  }
  const sessions = await store.sessions.deleteMany(sessionIds);
  return { sessions, tasks, steps, pictures, events, triggerRuns };
}
