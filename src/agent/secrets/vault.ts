import { TaskSecrets, type SecretEntry } from './secrets';
import type { SessionMasks } from '../../store/masks.repository';

interface SessionSecrets {
  taskId: string;
  /** The running task's secrets: what placeholders resolve to. */
  current: TaskSecrets;
  /** Every value the session was given, for masking (a page may still show an earlier task's). */
  all: TaskSecrets;
  entries: SecretEntry[];
  /** Values only masked, never typed by placeholder (what a person typed into a secret field). */
  masked: SecretEntry[];
}

/** Where the values a session masks are kept for it beyond this worker's memory (sealed; see MasksRepository). */
export interface MasksStore {
  save(sessionId: string, masks: SessionMasks): Promise<void>;
  get(sessionId: string): Promise<SessionMasks | null>;
}

/** Each entry once, in the order first seen. */
function distinct(entries: SecretEntry[]): SecretEntry[] {
  const seen = new Set<string>();
  return entries.filter((e) => {
    const key = JSON.stringify(e);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Where secret values live on a browser worker: in memory, per session, handed over by the
 * session workflow once per task and worker, dropped when the session's browser closes.
 * What the session masks (every task's secrets, what a person typed into a secret field) is
 * also kept in `store` as it changes, and read back when its browser opens elsewhere.
 */
export class SecretVault {
  private readonly sessions = new Map<string, SessionSecrets>();
  /** The last write of each session's masks to the store. */
  private readonly writes = new Map<string, Promise<void>>();

  constructor(
    private readonly store?: MasksStore,
    /** Told when the masks could not be stored (they stay masked on this worker). */
    private readonly onStoreFailed?: (sessionId: string, err: unknown) => void,
  ) {}

  /** The task's secrets arrive (its first step on this worker). */
  hold(sessionId: string, taskId: string, entries: SecretEntry[]): void {
    const prev = this.sessions.get(sessionId);
    const all = distinct([...(prev?.entries ?? []), ...entries]);
    const masked = prev?.masked ?? [];
    const current = new TaskSecrets(entries, (name, code) => this.maskAlso(sessionId, name, code));
    this.sessions.set(sessionId, { taskId, current, all: new TaskSecrets([...all, ...masked]), entries: all, masked });
    if (all.length !== prev?.entries.length) this.keep(sessionId);
  }

  /**
   * A value to mask from now on in all the session sends out (events, recordings, summaries,
   * stored addresses), though it was never given as a secret: what a person typed by hand
   * into a password or one-time-code field. It cannot be typed by placeholder.
   */
  maskAlso(sessionId: string, name: string, value: string): void {
    if (!value) return;
    const prev = this.sessions.get(sessionId);
    const entries = prev?.entries ?? [];
    const masked = [...(prev?.masked ?? []), { match: 'all', fields: { [name]: value } }];
    this.sessions.set(sessionId, { taskId: prev?.taskId ?? '', current: prev?.current ?? new TaskSecrets([]), all: new TaskSecrets([...entries, ...masked]), entries, masked });
    this.keep(sessionId);
  }

  /**
   * The session's browser opened on this worker again (a wake, a restore): what it masked
   * before comes back from the store, before anything of its pages is sent out.
   */
  async recall(sessionId: string): Promise<void> {
    const saved = await this.store?.get(sessionId);
    if (!saved) return;
    const prev = this.sessions.get(sessionId);
    const entries = distinct([...saved.given, ...(prev?.entries ?? [])]);
    const masked = distinct([...saved.masked, ...(prev?.masked ?? [])]);
    this.sessions.set(sessionId, { taskId: prev?.taskId ?? '', current: prev?.current ?? new TaskSecrets([]), all: new TaskSecrets([...entries, ...masked]), entries, masked });
  }

  /** Waits until what the session masks is in the store (a worker lost right after still has it elsewhere). */
  async flush(sessionId: string): Promise<void> {
    await this.writes.get(sessionId);
  }

  /** The session's masks go to the store, after the write before (never out of order). */
  private keep(sessionId: string): void {
    const store = this.store;
    const held = this.sessions.get(sessionId);
    if (!store || !held) return;
    const masks: SessionMasks = { given: held.entries, masked: held.masked };
    const write = (this.writes.get(sessionId) ?? Promise.resolve()).then(() => store.save(sessionId, masks)).catch((err) => this.onStoreFailed?.(sessionId, err));
    this.writes.set(sessionId, write);
    void write.finally(() => {
      if (this.writes.get(sessionId) === write) this.writes.delete(sessionId);
    });
  }

  /** The secrets of this task, if this worker holds them. */
  forTask(sessionId: string, taskId: string): TaskSecrets | undefined {
    const held = this.sessions.get(sessionId);
    return held && held.taskId === taskId ? held.current : undefined;
  }

  /** `text` with every value the session was given replaced by its placeholder. */
  mask(sessionId: string, text: string): string {
    const held = this.sessions.get(sessionId);
    return held ? held.all.mask(text) : text;
  }

  maskDeep<T>(sessionId: string, value: T): T {
    const held = this.sessions.get(sessionId);
    return held ? held.all.maskDeep(value) : value;
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }
}
