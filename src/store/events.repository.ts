import { MongoServerError, type Collection, type Db } from 'mongodb';
import type { TimelineEntry } from '../contracts/events';
import { lastTakenPlace } from './id-probe';
import { isEmbeddedFerretDb } from './mongo';

type EventRecord = TimelineEntry & { _id: string; expiresAt?: Date };
type NewEntry = Omit<TimelineEntry, 'seq'>;

/** Enough tries for many processes racing on one session; each lost race moves on at once. */
const MAX_APPEND_TRIES = 100;
/** Sessions whose last seq this process remembers (saves a read per event). */
const REMEMBERED_SESSIONS = 5000;

/** Ended sessions whose timelines one sweep deletes (the next sweep takes the rest). */
const SWEEP_SESSIONS = 200;
/** The most events looked up at once when reading a timeline by `_id`. */
const AFTER_WINDOW_MAX = 64;
/** Events deleted in one command. */
const DELETE_CHUNK = 500;

const eventId = (sessionId: string, seq: number) => `${sessionId}:${String(seq).padStart(9, '0')}`;
const isDuplicateKey = (err: unknown) => err instanceof MongoServerError && err.code === 11000;

/**
 * The session's timeline: every event with its per-session seq, for replay after reconnects.
 *
 * A seq is taken by inserting the event under it: the event's `_id` is the session and
 * the seq, so of two processes that pick the same seq exactly one insert succeeds and
 * the other tries the next one. Nothing relies on an atomic read-modify-write (FerretDB
 * does not make concurrent updates of one document atomic), so seqs have no gaps and no
 * event is lost or duplicated, however many processes publish for one session.
 */
export class EventsRepository {
  private readonly events: Collection<EventRecord>;
  /** The last seq this process stored or saw per session: the next insert tries the one after. */
  private readonly lastSeq = new Map<string, number>();
  /** When each ended session's timeline goes (`_id`: the session). */
  private readonly expiries: Collection<{ _id: string; expiresAt: Date }>;
  /** Whether events may still carry their own expiry date (written before `eventExpiries`). */
  private legacyMarks = true;
  private isEmbedded?: Promise<boolean>;
  constructor(private readonly db: Db) {
    this.events = db.collection<EventRecord>('events');
    this.expiries = db.collection('eventExpiries');
  }

  /** Stores the entry under the session's next seq and answers it with that seq. */
  async appendNext(entry: NewEntry): Promise<TimelineEntry> {
    const { sessionId } = entry;
    let seq = (this.lastSeq.get(sessionId) ?? (await this.highestSeq(sessionId))) + 1;
    for (let tries = 1; ; tries++) {
      const stored = { ...entry, seq } as TimelineEntry;
      try {
        await this.events.insertOne({ ...stored, _id: eventId(sessionId, seq) });
        this.remember(sessionId, seq);
        return stored;
      } catch (err) {
        if (!isDuplicateKey(err) || tries >= MAX_APPEND_TRIES) throw err;
        // Another process took this seq: continue after the highest one stored.
        seq = Math.max(seq, await this.highestSeq(sessionId)) + 1;
      }
    }
  }

  /**
   * The session's highest stored seq, found by lookups by `_id` (seqs start at 1 and have no
   * gaps): one for a new session, a few dozen for the longest. A query on `sessionId` would
   * read every session's events on the embedded FerretDB.
   */
  private highestSeq(sessionId: string): Promise<number> {
    return lastTakenPlace(async (seq) => (await this.events.findOne({ _id: eventId(sessionId, seq) }, { projection: { _id: 1 } })) !== null, 1);
  }

  private remember(sessionId: string, seq: number): void {
    this.lastSeq.delete(sessionId);
    this.lastSeq.set(sessionId, seq);
    if (this.lastSeq.size > REMEMBERED_SESSIONS) this.lastSeq.delete(this.lastSeq.keys().next().value!);
  }

  /** The session's events after `seq`, oldest first, at most `limit`. */
  async after(sessionId: string, seq: number, limit = 1000): Promise<TimelineEntry[]> {
    if (!(await this.embedded())) {
      return this.events
        .find({ sessionId, seq: { $gt: seq } }, { projection: { _id: 0, expiresAt: 0 } })
        .sort({ seq: 1 })
        .limit(limit)
        .toArray() as Promise<TimelineEntry[]>;
    }
    // The embedded FerretDB would read every stored event for that query: the next seqs are
    // looked up by `_id` instead (seqs have no gaps), one first (a poll mostly finds none),
    // then in growing windows.
    const out: TimelineEntry[] = [];
    for (let next = seq + 1, window = 1; out.length < limit; next += window, window = Math.min(window * 4, AFTER_WINDOW_MAX)) {
      const n = Math.min(window, limit - out.length);
      const found = await Promise.all(
        Array.from({ length: n }, (_, i) => this.events.findOne({ _id: eventId(sessionId, next + i) }, { projection: { _id: 0, expiresAt: 0 } })),
      );
      for (const e of found) {
        if (!e) return out;
        out.push(e as TimelineEntry);
      }
    }
    return out;
  }

  /** Whether the database is the embedded FerretDB (asked once). */
  private embedded(): Promise<boolean> {
    this.isEmbedded ??= isEmbeddedFerretDb(this.db).catch(() => {
      this.isEmbedded = undefined;
      return false;
    });
    return this.isEmbedded;
  }

  /** The seq of the session's newest stored event (0 when none). */
  async latestSeq(sessionId: string): Promise<number> {
    return this.highestSeq(sessionId);
  }

  /**
   * Events are kept for the session's life plus an hour. The date is one small record per
   * session: marking every event of the session would read the whole collection on the
   * embedded FerretDB, holding its write lock for seconds while sessions end.
   */
  async markExpiry(sessionId: string, expiresAt: Date): Promise<void> {
    await this.expiries.updateOne({ _id: sessionId }, { $set: { expiresAt } }, { upsert: true });
  }

  /** Deletes the timelines past their date; called by every process's sweeper (idempotent). */
  async sweep(now: Date): Promise<number> {
    let deleted = 0;
    const due = await this.expiries.find({ expiresAt: { $lt: now } }).limit(SWEEP_SESSIONS).toArray();
    for (const { _id: sessionId } of due) {
      deleted += await this.deleteTimeline(sessionId);
      this.lastSeq.delete(sessionId);
      await this.expiries.deleteOne({ _id: sessionId, expiresAt: { $lt: now } });
    }
    // Events marked one by one (before the dates were kept apart) go by their own date.
    if (this.legacyMarks) {
      deleted += (await this.events.deleteMany({ expiresAt: { $lt: now } })).deletedCount;
      this.legacyMarks = (await this.events.countDocuments({ expiresAt: { $exists: true } }, { limit: 1 })) > 0;
    }
    return deleted;
  }

  /** Deletes a session's timeline now, whatever its date (the records' retention); the number of events removed. */
  async deleteSession(sessionId: string): Promise<number> {
    const deleted = await this.deleteTimeline(sessionId);
    this.lastSeq.delete(sessionId);
    await this.expiries.deleteOne({ _id: sessionId });
    return deleted;
  }

  /**
   * Deletes a session's events by `_id`, newest first, so what a broken sweep leaves is
   * still seqs 1..k and the next sweep finds its end the same way.
   */
  private async deleteTimeline(sessionId: string): Promise<number> {
    let deleted = 0;
    for (let high = await this.highestSeq(sessionId); high >= 1; high -= DELETE_CHUNK) {
      const low = Math.max(1, high - DELETE_CHUNK + 1);
      const ops = Array.from({ length: high - low + 1 }, (_, i) => ({ deleteOne: { filter: { _id: eventId(sessionId, high - i) } } }));
      deleted += (await this.events.bulkWrite(ops, { ordered: true })).deletedCount;
    }
    return deleted;
  }
}
