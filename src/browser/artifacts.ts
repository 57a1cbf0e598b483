import type { Download, Request } from 'playwright-core';
import type { Logger } from '../logger';
import type { DownloadGuard } from './download-guard';

/** A file the page downloaded during a task (data.files of the result). */
export interface CapturedFile {
  fileId: string;
  source: string;
  filename: string;
  timestamp: number;
}

/** What persisting a download yields: the stored file's id. */
export type PersistDownload = (d: { sessionId: string; taskId: string; sourceUrl: string; filename: string; stream: NodeJS.ReadableStream }) => Promise<{ fileId: string }>;

const SECRET_PARAM = /^(.*[-_])?(token|access[-_]?token|id[-_]?token|refresh[-_]?token|key|api[-_]?key|apikey|secret|password|passwd|pwd|auth|authorization|signature|sig|session|sessionid|code|otp|credential|credentials|jwt)$/i;

/** The longest URL kept in captures (data.network, a download's source); longer ones are cut with a marker. */
export const MAX_CAPTURED_URL = 2048;

/**
 * A URL as captures keep it: masked, and at most MAX_CAPTURED_URL characters. A page can
 * request URLs of megabytes (data: URLs, long query strings); only their start is parsed
 * and kept, and the cut is marked with the number of characters left out.
 */
export function captureUrl(raw: string): string {
  if (raw.length <= MAX_CAPTURED_URL) {
    const masked = maskUrl(raw);
    if (masked.length <= MAX_CAPTURED_URL) return masked;
  }
  const marker = `…[cut, ${raw.length} characters in all]`;
  const head = maskUrl(raw.slice(0, MAX_CAPTURED_URL));
  return head.slice(0, MAX_CAPTURED_URL - marker.length) + marker;
}

/** A URL with credentials and secret-looking query values masked. */
export function maskUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  if (url.username || url.password) {
    url.username = url.username ? '***' : '';
    url.password = url.password ? '***' : '';
  }
  for (const name of [...new Set(url.searchParams.keys())]) {
    if (SECRET_PARAM.test(name)) url.searchParams.set(name, '***');
  }
  return url.toString();
}

/**
 * Downloads and requests of one session's pages, kept per task: downloads are streamed to
 * storage as they happen, requests are counted up to a bound.
 */
export class SessionArtifacts {
  /** The task the agent works on now; captures outside a task are not kept. */
  taskId?: string;
  private readonly files = new Map<string, CapturedFile[]>();
  private readonly requests = new Map<string, { url: string; timestamp: number }[]>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly sessionId: string,
    private readonly opts: { maxRequests: number; persist?: PersistDownload; logger: Logger; downloads?: DownloadGuard },
  ) {}

  onRequest(req: Request): void {
    const taskId = this.taskId;
    if (!taskId) return;
    const list = this.requests.get(taskId) ?? [];
    if (list.length >= this.opts.maxRequests) return;
    // performance.timeOrigin + now keeps sub-millisecond precision (the contract allows fractions).
    list.push({ url: captureUrl(req.url()), timestamp: Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000 });
    this.requests.set(taskId, list);
  }

  onDownload(download: Download): void {
    const taskId = this.taskId;
    const persist = this.opts.persist;
    if (!taskId || !persist) {
      void download.cancel().catch(() => undefined);
      return;
    }
    // The guard stops it while in progress once it passes the size cap; then it is not stored.
    const watch = this.opts.downloads?.track(download, { sessionId: this.sessionId, taskId });
    const filename = download.suggestedFilename();
    const source = captureUrl(download.url());
    const refuse = (bytes: number) =>
      this.opts.logger.warn(
        // (not its address or name: a page may put a typed secret in either, and logs never hold one)
        { sessionId: this.sessionId, taskId, bytes, maxBytes: this.opts.downloads?.maxBytes },
        'download not stored: it passed the size cap for downloads (FILE_MAX_BYTES) and was stopped',
      );
    const job = (async () => {
      let stream: NodeJS.ReadableStream;
      try {
        // (resolves once the download has finished; rejects when it was cancelled)
        stream = await download.createReadStream();
      } catch (err) {
        if (watch?.oversize !== undefined) return refuse(watch.oversize);
        throw err;
      }
      // It may have finished past the cap between two checks.
      const oversize = watch?.checkFinished();
      if (oversize !== undefined) {
        (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
        return refuse(oversize);
      }
      const { fileId } = await persist({ sessionId: this.sessionId, taskId, sourceUrl: source, filename, stream });
      const list = this.files.get(taskId) ?? [];
      list.push({ fileId, source, filename, timestamp: Date.now() });
      this.files.set(taskId, list);
    })()
      .catch((err) => this.opts.logger.warn({ sessionId: this.sessionId, taskId, err: String(err) }, 'download not stored'))
      .finally(() => {
        watch?.release();
        // Stored or not, the worker's copy goes at once (not when the context closes).
        void download.delete().catch(() => undefined);
      });
    this.pending.add(job);
    void job.finally(() => this.pending.delete(job));
  }

  /** The task's captures, once downloads still streaming have finished (bounded wait). */
  async collect(taskId: string, waitMs = 10_000): Promise<{ files: CapturedFile[]; network: { url: string; timestamp: number }[] }> {
    if (this.pending.size) await Promise.race([Promise.allSettled([...this.pending]), new Promise((r) => setTimeout(r, waitMs))]);
    const out = { files: this.files.get(taskId) ?? [], network: this.requests.get(taskId) ?? [] };
    this.files.delete(taskId);
    this.requests.delete(taskId);
    return out;
  }

  /** Gives back what `collect` took when storing it failed, so the next try stores it (ahead of anything captured since). */
  restore(taskId: string, taken: { files: CapturedFile[]; network: { url: string; timestamp: number }[] }): void {
    if (taken.files.length) this.files.set(taskId, [...taken.files, ...(this.files.get(taskId) ?? [])]);
    if (taken.network.length) this.requests.set(taskId, [...taken.network, ...(this.requests.get(taskId) ?? [])]);
  }
}
