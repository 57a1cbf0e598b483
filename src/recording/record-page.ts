import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PictureSkip, RecordedStep } from '../contracts/recording';

const sign = (secret: string, sessionId: string, taskId: string, expires: number): string => createHmac('sha256', secret).update(`recording:${sessionId}:${taskId}:${expires}`).digest('base64url');

/** What the record page says of a step without a picture. */
const NO_PICTURE: Record<PictureSkip, string> = {
  unchanged: 'no picture: the page looked as in the picture before',
  busy: 'no picture: the worker was busy (pictures every other step)',
  secret_fields: 'no picture: a secret field could not be covered',
  no_page: 'no picture: the page was closed',
  failed: 'no picture',
  quota: 'no picture: the storage quota was full',
  not_stored: 'no picture: it could not be stored',
};

/**
 * The signed token of a task's record page: bound to the session and the task, and valid until
 * `expiresAt` (ms; written in seconds): `<expiry>.<signature>`.
 */
export function recordPageToken(secret: string, sessionId: string, taskId: string, expiresAt: number): string {
  const expires = Math.ceil(expiresAt / 1000);
  return `${expires}.${sign(secret, sessionId, taskId, expires)}`;
}

/** Whether `token` opens the record page of this task now: signed for it, and not expired. */
export function checkRecordPageToken(secret: string, sessionId: string, taskId: string, token: unknown, now = Date.now()): boolean {
  if (typeof token !== 'string') return false;
  const m = /^(\d{1,12})\.([\w-]{1,100})$/.exec(token);
  if (!m) return false;
  const expires = Number(m[1]);
  if (expires * 1000 <= now) return false;
  const want = Buffer.from(sign(secret, sessionId, taskId, expires));
  const got = Buffer.from(m[2]);
  return want.length === got.length && timingSafeEqual(want, got);
}

/** Pictures from this origin, styles inline, nothing else: the page runs no script at all. */
export const RECORD_PAGE_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const WHO: Record<RecordedStep['by'], string> = { agent: 'agent', human: 'person', replay: 'replayed' };

/** What a step acted on, as the caption names it. */
export function stepTarget(s: RecordedStep): string {
  if (s.element) return `${s.element.role} "${s.element.name || s.element.text || s.element.label || s.element.placeholder || ''}"`;
  if (typeof s.args.url === 'string') return s.args.url;
  if (typeof s.args.keys === 'string') return s.args.keys;
  if (typeof s.args.key === 'string') return s.args.key;
  return '';
}

/**
 * The step-by-step record of a task: each step's picture with its action, target, who did it,
 * the agent's words, the outcome and the address. Every text is escaped (it comes from pages
 * and models); `pictureUrl` gives the signed address of a step's picture.
 */
export function recordPage(opts: { sessionId: string; taskId: string; status: string; steps: RecordedStep[]; pictureUrl: (seq: number) => string }): string {
  const rows = opts.steps
    .map((s) => {
      const picture = s.pictureFileId
        ? `<img src="${escapeHtml(opts.pictureUrl(s.seq))}" alt="The page after step ${s.seq + 1}" loading="lazy">`
        : `<div class="none" data-skipped="${escapeHtml(s.pictureSkipped ?? '')}">${escapeHtml(NO_PICTURE[s.pictureSkipped ?? 'failed'])}</div>`;
      const words = s.reasoning ? `<p class="reasoning">${escapeHtml(s.reasoning)}</p>` : '';
      const error = s.error ? `<p class="error">${escapeHtml(s.error)}</p>` : '';
      return `<li class="step ${s.outcome}" data-seq="${s.seq}">
  ${picture}
  <div class="caption">
    <p><span class="n">${s.seq + 1}</span> <b class="action">${escapeHtml(s.action)}</b> <span class="target">${escapeHtml(stepTarget(s))}</span> <span class="by">by ${WHO[s.by] ?? escapeHtml(s.by)}</span> <span class="outcome">${escapeHtml(s.outcome)}</span></p>
    ${words}${error}
    <p class="url">${escapeHtml(s.urlAfter || s.urlBefore)}</p>
  </div>
</li>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Task ${escapeHtml(opts.taskId)}: step by step</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f4f4f5;color:#18181b}
header{padding:12px 20px;background:#18181b;color:#fafafa}
ol{list-style:none;margin:0;padding:16px;display:grid;gap:16px}
.step{display:flex;gap:16px;background:#fff;border-radius:8px;padding:12px;box-shadow:0 1px 2px #0002}
.step img,.none{width:480px;max-width:50vw;border:1px solid #e4e4e7;border-radius:4px}
.none{display:flex;align-items:center;justify-content:center;height:120px;color:#71717a}
.n{display:inline-block;min-width:1.6em;font-weight:700}
.by,.outcome{color:#52525b;margin-left:6px}
.failed .outcome,.blocked .outcome,.error{color:#b91c1c}
.reasoning{font-style:italic;color:#3f3f46}
.url{color:#71717a;word-break:break-all;font-size:12px}
</style></head>
<body><header><b>Task ${escapeHtml(opts.taskId)}</b> · ${escapeHtml(opts.status)} · ${opts.steps.length} steps</header>
<ol id="steps">
${rows}
</ol></body></html>`;
}
