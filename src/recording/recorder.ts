import type { Logger } from '../logger';
import type { RecordingHeader, RecordingsRepository } from '../store/recordings.repository';
import type { PictureSkip, RecordedStep } from '../contracts/recording';

export type NewStep = Omit<RecordedStep, 'seq' | 'at'>;

/** A step's picture, or why there is none. */
export interface StepShot {
  jpeg?: Buffer;
  skipped?: PictureSkip;
}

/** Pictures of the page after each step (src/recording/pictures.ts). */
export interface StepPictureSource {
  /** The page of the session as it is now, after a step of the task, or why there is no picture. */
  shoot(sessionId: string, taskId: string): Promise<StepShot>;
  /** Stores pictures of steps of one task: the file of each stored one, by the step's place. */
  store(owner: StepOwner, shots: { seq: number; jpeg: Buffer }[]): Promise<Map<number, string>>;
}

/**
 * How long a task's steps wait to be written together, and how many are written at most before
 * that. With 20 sessions stepping about once a second on two cores, 3 s instead of 1 s took
 * the database operations per step from 20-21 to 13-14 and the median step from 1.0 s to
 * 0.8 s (bench/concurrency.bench.ts). A running task's recording shows its last steps up to
 * this much later; a task's end writes what waits at once.
 */
export const RECORDING_LINGER_MS = 3_000;
export const RECORDING_MAX_BATCH = 20;

interface Pending {
  ready: Promise<{ step: RecordedStep; jpeg?: Buffer }>;
  done: (stored: RecordedStep | undefined) => void;
}

interface TaskQueue {
  owner: StepOwner;
  entries: Pending[];
  timer?: NodeJS.Timeout;
  /** The write under way; a flush asked for meanwhile runs after it. */
  writing?: Promise<void>;
  urgent: boolean;
}

/**
 * Writes the steps of the tasks a worker runs into their recordings, in the order they were
 * performed. Places are handed out here, one task at a time; a worker that takes a session
 * over continues after the last stored step. A step that cannot be stored is logged and
 * dropped: the recording never stops the task.
 *
 * Off the step's path and together: a step's picture is taken the moment the step is added,
 * then the task's steps wait up to `lingerMs` (or until `maxBatch` are waiting, or the task
 * settles) and are written with their pictures in a few writes for all of them. Each step
 * and picture on its own took about ten writes, the most of the database's work while many
 * sessions step at once.
 */
export class Recorder {
  private readonly next = new Map<string, Promise<number>>();
  private readonly queues = new Map<string, TaskQueue>();
  /** Writes still under way, per task: a task's end waits for them (settle). */
  private readonly pending = new Map<string, Set<Promise<unknown>>>();
  private readonly lingerMs: number;
  private readonly maxBatch: number;

  constructor(
    private readonly deps: {
      recordings: RecordingsRepository;
      logger: Logger;
      pictures?: StepPictureSource;
      lingerMs?: number;
      maxBatch?: number;
    },
  ) {
    this.lingerMs = deps.lingerMs ?? RECORDING_LINGER_MS;
    this.maxBatch = deps.maxBatch ?? RECORDING_MAX_BATCH;
  }

  /**
   * Adds a step: its place is taken and its picture shot now, so steps keep their order and
   * each picture shows the page right after its step; the write follows. Awaiting the answer
   * is optional; `settle` writes and waits for every step of a task.
   */
  add(owner: StepOwner, step: NewStep): Promise<RecordedStep | undefined> {
    const at = new Date().toISOString();
    const shot = this.deps.pictures?.shoot(owner.sessionId, owner.taskId).catch((err: unknown): StepShot => {
      this.deps.logger.debug({ sessionId: owner.sessionId, taskId: owner.taskId, err: String(err) }, 'no picture of the step');
      return { skipped: 'failed' };
    });
    const placed = this.place(owner.taskId);
    let done!: (stored: RecordedStep | undefined) => void;
    const work = new Promise<RecordedStep | undefined>((resolve) => (done = resolve));
    const ready = (async () => {
      const picture = await shot;
      const recorded = { seq: await placed, ...step, at } as RecordedStep;
      if (picture?.skipped) recorded.pictureSkipped = picture.skipped;
      return { step: recorded, jpeg: picture?.jpeg };
    })();
    const queue = this.queueOf(owner);
    queue.entries.push({ ready, done });
    if (queue.entries.length >= this.maxBatch) this.flush(queue);
    else queue.timer ??= setTimeout(() => this.flush(queue), this.lingerMs);

    let set = this.pending.get(owner.taskId);
    if (!set) this.pending.set(owner.taskId, (set = new Set()));
    set.add(work);
    void work.finally(() => {
      set.delete(work);
      if (!set.size && this.pending.get(owner.taskId) === set) this.pending.delete(owner.taskId);
    });
    return work;
  }

  /** Writes what waits of the task now and waits until its steps (and their pictures) are stored. */
  async settle(taskId: string): Promise<void> {
    const queue = this.queues.get(taskId);
    if (queue) {
      queue.urgent = true;
      this.flush(queue);
    }
    const set = this.pending.get(taskId);
    if (set) await Promise.allSettled([...set]);
  }

  /** Writes what waits of every task now and waits for it (the worker is stopping). */
  async settleAll(): Promise<void> {
    // Every step still waiting is among the pending ones of its task.
    await Promise.all([...this.pending.keys()].map((taskId) => this.settle(taskId)));
  }

  /** Notes what the task was asked (never fails the task). */
  async begin(owner: StepOwner, header: RecordingHeader): Promise<void> {
    await this.deps.recordings.begin(owner, header).catch((err: unknown) => this.deps.logger.warn({ sessionId: owner.sessionId, taskId: owner.taskId, err: String(err) }, 'recording header not stored'));
  }

  /** Forgets the tasks of a session (the session ended or moved). */
  forget(taskId: string): void {
    this.next.delete(taskId);
  }

  private queueOf(owner: StepOwner): TaskQueue {
    let queue = this.queues.get(owner.taskId);
    if (!queue) this.queues.set(owner.taskId, (queue = { owner, entries: [], urgent: false }));
    return queue;
  }

  /** Starts writing what waits (after the write under way, if any). */
  private flush(queue: TaskQueue): void {
    clearTimeout(queue.timer);
    queue.timer = undefined;
    if (queue.writing) return; // the write under way looks again when it ends
    queue.writing = (async () => {
      try {
        while (queue.entries.length) {
          const batch = queue.entries.splice(0, this.maxBatch);
          await this.write(queue.owner, batch).catch((err: unknown) => {
            this.deps.logger.warn({ sessionId: queue.owner.sessionId, taskId: queue.owner.taskId, err: String(err) }, 'recording steps not stored');
            batch.forEach((p) => p.done(undefined));
          });
          // More came while writing: they wait for their own linger unless the task is settling or they are many.
          if (!queue.urgent && queue.entries.length < this.maxBatch) break;
        }
      } finally {
        queue.writing = undefined;
        if (queue.entries.length) queue.timer ??= setTimeout(() => this.flush(queue), queue.urgent ? 0 : this.lingerMs);
        else if (this.queues.get(queue.owner.taskId) === queue) this.queues.delete(queue.owner.taskId);
      }
    })();
  }

  private async write(owner: StepOwner, batch: Pending[]): Promise<void> {
    const items = await Promise.all(batch.map((p) => p.ready));
    const log = { sessionId: owner.sessionId, taskId: owner.taskId };
    const shots = items.filter((i) => i.jpeg).map((i) => ({ seq: i.step.seq, jpeg: i.jpeg! }));
    if (shots.length && this.deps.pictures) {
      try {
        const files = await this.deps.pictures.store(owner, shots);
        for (const i of items) {
          if (!i.jpeg) continue;
          const fileId = files.get(i.step.seq);
          if (fileId) i.step.pictureFileId = fileId;
          else i.step.pictureSkipped = 'quota';
        }
      } catch (err) {
        this.deps.logger.warn({ ...log, err: String(err) }, 'step pictures not stored');
        for (const i of items) if (i.jpeg) i.step.pictureSkipped = 'not_stored';
      }
    }
    let stored = 0;
    try {
      stored = await this.deps.recordings.addMany(owner, items.map((i) => i.step));
    } catch (err) {
      this.deps.logger.warn({ ...log, err: String(err) }, 'recording steps not stored');
      batch.forEach((p) => p.done(undefined));
      return;
    }
    for (let k = 0; k < stored; k++) batch[k].done(items[k].step);
    // A place was taken by another writer (the session moved): the rest go after the last stored step.
    for (let k = stored; k < items.length; k++) batch[k].done(await this.writeAlone(owner, items[k].step));
  }

  private async writeAlone(owner: StepOwner, step: RecordedStep): Promise<RecordedStep | undefined> {
    try {
      for (let tries = 0; tries < 3; tries++) {
        step.seq = await this.place(owner.taskId, true);
        if (await this.deps.recordings.add(owner, step)) return step;
      }
    } catch (err) {
      this.deps.logger.warn({ sessionId: owner.sessionId, taskId: owner.taskId, err: String(err) }, 'recording step not stored');
    }
    return undefined;
  }

  private place(taskId: string, reread = false): Promise<number> {
    const prev = reread ? undefined : this.next.get(taskId);
    const seq = prev ? prev.then((n) => n + 1) : this.deps.recordings.nextSeq(taskId).catch(() => 0);
    this.next.set(taskId, seq);
    return seq;
  }
}

export interface StepOwner {
  userId: string;
  sessionId: string;
  taskId: string;
}
