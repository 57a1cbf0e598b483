import type { Collection, Db } from 'mongodb';
import type { TimelineEntry } from '../events/types';

type EventRecord = TimelineEntry & { _id: string; expiresAt?: Date };

/** The session's timeline: every event with its per-session seq, for replay after reconnects. */
export class EventsRepository {
  private readonly events: Collection<EventRecord>;
  private readonly counters: Collection<{ _id: string; seq: number }>;
  constructor(db: Db) {
    this.events = db.collection<EventRecord>('events');
    this.counters = db.collection('eventCounters');
  }

  /** Strictly increasing per session, across every process (one atomic $inc). */
  async nextSeq(sessionId: string): Promise<number> {
    const doc = await this.counters.findOneAndUpdate({ _id: sessionId }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after' });
    return doc!.seq;
  }

  async append(entry: TimelineEntry): Promise<void> {
    await this.events.insertOne({ ...entry, _id: `${entry.sessionId}:${String(entry.seq).padStart(9, '0')}` });
  }

  after(sessionId: string, seq: number, limit = 1000): Promise<TimelineEntry[]> {
    return this.events
      .find({ sessionId, seq: { $gt: seq } }, { projection: { _id: 0, expiresAt: 0 } })
      .sort({ seq: 1 })
      .limit(limit)
      .toArray() as Promise<TimelineEntry[]>;
  }

  /** The seq of the session's newest stored event (0 when none). */
  async latestSeq(sessionId: string): Promise<number> {
    const [last] = await this.events.find({ sessionId }, { projection: { seq: 1 } }).sort({ seq: -1 }).limit(1).toArray();
    return last?.seq ?? 0;
  }

  /** Events are kept for the session's life plus an hour; called by the sweeper. */
  async markExpiry(sessionId: string, expiresAt: Date): Promise<void> {
    await this.events.updateMany({ sessionId }, { $set: { expiresAt } });
  }

  async sweep(now: Date): Promise<number> {
    const res = await this.events.deleteMany({ expiresAt: { $lt: now } });
    return res.deletedCount;
  }
}
