import { TaskSecrets, type SecretEntry } from './secrets';

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

/**
 * Where secret values live on a browser worker: in memory, per session, handed over by the
 * session workflow once per task and worker, dropped when the session's browser closes.
 */
export class SecretVault {
  private readonly sessions = new Map<string, SessionSecrets>();

  /** The task's secrets arrive (its first step on this worker). */
  hold(sessionId: string, taskId: string, entries: SecretEntry[]): void {
    const prev = this.sessions.get(sessionId);
    const all = [...(prev?.entries ?? []), ...entries];
    const masked = prev?.masked ?? [];
    const current = new TaskSecrets(entries, (name, code) => this.maskAlso(sessionId, name, code));
    this.sessions.set(sessionId, { taskId, current, all: new TaskSecrets([...all, ...masked]), entries: all, masked });
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
