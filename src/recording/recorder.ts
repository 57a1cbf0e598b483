import type { Logger } from '../logger';
import type { RecordingHeader, RecordingsRepository } from '../store/recordings.repository';
import type { RecordedStep } from './types';

export type NewStep = Omit<RecordedStep, 'seq' | 'at'>;

/**
 * Writes the steps of the tasks a worker runs into their recordings, in the order they were
 * performed. Places are handed out here, one task at a time; a worker that takes a session
 * over continues after the last stored step. A step that cannot be stored is logged and
 * dropped: the recording never stops the task.
 */
export class Recorder {
  private readonly next = new Map<string, Promise<number>>();

  constructor(
    private readonly deps: {
      recordings: RecordingsRepository;
      logger: Logger;
      /** Runs after a step is stored, before the next action (the picture of the page after it). */
      afterStored?: (owner: StepOwner, step: RecordedStep) => Promise<void>;
    },
  ) {}

  /** Writes still under way, per task: a task's end waits for them (settle). */
  private readonly pending = new Map<string, Set<Promise<unknown>>>();

  /**
   * Stores a step (and runs the after-step work) off the action's path: the place is taken
   * now, so steps keep their order however long each write takes. Awaiting the answer is
   * optional; `settle` waits for every write of a task.
   */
  add(owner: StepOwner, step: NewStep): Promise<RecordedStep | undefined> {
    const work = this.write(owner, step);
    let set = this.pending.get(owner.taskId);
    if (!set) this.pending.set(owner.taskId, (set = new Set()));
    set.add(work);
    void work.finally(() => {
      set.delete(work);
      if (!set.size && this.pending.get(owner.taskId) === set) this.pending.delete(owner.taskId);
    });
    return work;
  }

  /** Waits until the task's steps (and their pictures) are stored. */
  async settle(taskId: string): Promise<void> {
    const set = this.pending.get(taskId);
    if (set) await Promise.allSettled([...set]);
  }

  private async write(owner: StepOwner, step: NewStep): Promise<RecordedStep | undefined> {
    const at = new Date().toISOString();
    const placed = this.place(owner.taskId);
    const seq = await placed;
    const full: RecordedStep = { seq, ...step, at };
    try {
      for (let tries = 0; tries < 3; tries++) {
        if (await this.deps.recordings.add(owner, full)) {
          await this.deps.afterStored?.(owner, full).catch((err: unknown) => this.deps.logger.warn({ sessionId: owner.sessionId, taskId: owner.taskId, err: String(err) }, 'after-step work failed'));
          return full;
        }
        full.seq = await this.place(owner.taskId, true);
      }
    } catch (err) {
      this.deps.logger.warn({ sessionId: owner.sessionId, taskId: owner.taskId, err: String(err) }, 'recording step not stored');
    }
    return undefined;
  }

  /** Notes what the task was asked (never fails the task). */
  async begin(owner: StepOwner, header: RecordingHeader): Promise<void> {
    await this.deps.recordings.begin(owner, header).catch((err: unknown) => this.deps.logger.warn({ sessionId: owner.sessionId, taskId: owner.taskId, err: String(err) }, 'recording header not stored'));
  }

  /** Forgets the tasks of a session (the session ended or moved). */
  forget(taskId: string): void {
    this.next.delete(taskId);
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
