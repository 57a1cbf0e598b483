import type { Db } from 'mongodb';
import { LIVE_SESSION_STATUSES, type SessionsRepository } from './sessions.repository';

/**
 * What a session saved to come back elsewhere: its browser snapshot, its hibernation record
 * and the values it masks. None of it outlives the session: removed when its workflow ends
 * (whatever the reason, its worker gone included), and swept when left behind (a workflow
 * terminated from outside, a write racing the end).
 */
export const SAVED_STATE_COLLECTIONS = ['browserSnapshots', 'hibernations', 'sessionMasks'] as const;

/** A record younger than this is left to the sweep's next pass (its session record may be on its way). */
const SWEEP_GRACE_MS = 2 * 60 * 1000;

export async function removeSavedState(db: Db, sessionId: string): Promise<void> {
  await Promise.all(SAVED_STATE_COLLECTIONS.map((name) => db.collection<{ _id: string }>(name).deleteOne({ _id: sessionId })));
}

/** Removes the saved state of sessions that ended or have no record; answers how many records went. */
export async function sweepSavedState(db: Db, sessions: SessionsRepository, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - SWEEP_GRACE_MS);
  let removed = 0;
  for (const name of SAVED_STATE_COLLECTIONS) {
    const records = db.collection<{ _id: string; takenAt?: Date }>(name);
    for await (const { _id } of records.find({ takenAt: { $lt: before } }, { projection: { _id: 1 } })) {
      const session = await sessions.get(_id);
      if (session && LIVE_SESSION_STATUSES.includes(session.status)) continue;
      removed += (await records.deleteOne({ _id })).deletedCount;
    }
  }
  return removed;
}
