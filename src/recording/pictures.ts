import { STATE_KEY } from '../agent/observe/marker';
import type { CDPSession, Page } from 'playwright-core';
import type { Logger } from '../logger';
import type { BlobStore } from '../contracts/profiles';
import type { FilesRepository } from '../store/files.repository';
import { putWholeManyWithinQuota, type StorageQuota } from '../store/storage-quota';
import type { StepOwner, StepPictureSource } from './recorder';

/** JPEG quality of a step's picture: enough to see what happened, small enough to keep for every step. */
const QUALITY = 50;
const SHOT_TIMEOUT_MS = 2_000;
/** A picture is never larger than this (a viewport at quality 50 is far below). */
const MAX_PICTURE_BYTES = 2 * 1024 * 1024;

interface RoundEntry {
  owner: StepOwner;
  shots: { seq: number; jpeg: Buffer }[];
  resolve: (files: Map<number, string>) => void;
  reject: (err: unknown) => void;
}

/** One DevTools session per page for its pictures, opened on first use. */
const sessions = new WeakMap<Page, Promise<CDPSession>>();

const COVER_ATTRIBUTE = 'data-agent-cover';

/**
 * Runs in each frame: puts a black box over every field that holds or held a secret (password
 * fields, fields the observation took for secret, fields a secret was typed into) and answers
 * how many; `remove` takes the boxes away again.
 */
function coverSecretFields(a: { key: string; attr: string; remove: boolean }): number {
  for (const old of Array.from(document.querySelectorAll(`[${a.attr}]`))) old.remove();
  if (a.remove) return 0;
  const state = (window as unknown as Record<string, { secrets?: WeakSet<Element>; describe?: (el: Element) => { secret: boolean } } | undefined>)[a.key];
  const fields: Element[] = [];
  const collect = (root: Document | ShadowRoot): void => {
    for (const el of Array.from(root.querySelectorAll('input, textarea, [contenteditable]:not([contenteditable="false"]), *'))) {
      if (el.shadowRoot) collect(el.shadowRoot);
      if (!el.matches('input, textarea, [contenteditable]:not([contenteditable="false"])')) continue;
      let secret = (el as HTMLInputElement).type === 'password' || !!state?.secrets?.has(el);
      if (!secret && state?.describe) {
        try {
          secret = state.describe(el).secret;
        } catch {
          secret = false;
        }
      }
      if (secret) fields.push(el);
    }
  };
  collect(document);
  let n = 0;
  for (const el of fields) {
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) continue;
    const box = document.createElement('div');
    box.setAttribute(a.attr, '');
    box.style.cssText = `position:fixed;left:${r.left - 2}px;top:${r.top - 2}px;width:${r.width + 4}px;height:${r.height + 4}px;background:#000;z-index:2147483647;pointer-events:none;`;
    document.documentElement.appendChild(box);
    n++;
  }
  return n;
}

/** Covers the secret fields of every frame; false when a frame could not be covered (then no picture is taken). */
async function cover(page: Page, remove: boolean): Promise<boolean> {
  const results = await Promise.all(
    page.frames().map(async (f) => {
      if (f.isDetached()) return true;
      try {
        await Promise.race([f.evaluate(coverSecretFields, { key: STATE_KEY, attr: COVER_ATTRIBUTE, remove }), new Promise((_, reject) => setTimeout(() => reject(new Error('frame did not answer')), 1_000).unref())]);
        return true;
      } catch {
        // A frame that went away holds nothing to show; one that does not answer may.
        return f.isDetached();
      }
    }),
  );
  return results.every(Boolean);
}

/**
 * The viewport as JPEG, straight from DevTools with speed before size (about half the time of
 * Playwright's screenshot, which waits for fonts and settles animations first). Fields that
 * hold a secret are covered with black boxes first (and uncovered after): a picture never
 * shows a typed secret; a page whose fields could not be covered has no picture.
 */
async function shoot(page: Page): Promise<Buffer> {
  if (!(await cover(page, false))) {
    await cover(page, true);
    throw new Error('secret fields could not be covered');
  }
  try {
    return await capture(page);
  } finally {
    await cover(page, true);
  }
}

async function capture(page: Page): Promise<Buffer> {
  let session = sessions.get(page);
  if (!session) {
    session = page.context().newCDPSession(page);
    session.catch(() => sessions.delete(page));
    sessions.set(page, session);
  }
  const cdp = await session;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('picture timed out')), SHOT_TIMEOUT_MS)));
  try {
    const shot = await Promise.race([cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: QUALITY, optimizeForSpeed: true }), timeout]);
    return Buffer.from(shot.data, 'base64');
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A picture of the viewport after each recorded step: stored as a file of the task's owner
 * (kind `picture`, within the owner's storage quota, expiring like the task's downloads) and
 * named on the step. A page that cannot be shot (closed, crashed, too slow) has no picture.
 * The recorder hands a task's pictures over together, and pictures of one user's tasks that
 * meet are stored together: with one lock, one count and one insert of their records.
 */
export class StepPictures implements StepPictureSource {
  /** Per user: the round that pictures join until it is written, and the write under way. */
  private readonly waiting = new Map<string, RoundEntry[]>();
  private readonly writing = new Map<string, Promise<void>>();

  constructor(private readonly deps: { files: FilesRepository; blobs: BlobStore; quota: StorageQuota; logger: Logger; pageOf: (sessionId: string) => Page | undefined }) {}

  async shoot(sessionId: string): Promise<Buffer | undefined> {
    const page = this.deps.pageOf(sessionId);
    if (!page || page.isClosed()) return undefined;
    return shoot(page);
  }

  /**
   * Stores a task's pictures. Pictures of one user that come while a write of theirs is under
   * way wait for it and are then written together, whatever task they belong to (a group
   * commit): with many sessions stepping at once, one round of the quota lock, the count and
   * the inserts serves many tasks instead of each task taking its own.
   */
  store(owner: StepOwner, shots: { seq: number; jpeg: Buffer }[]): Promise<Map<number, string>> {
    if (!shots.length) return Promise.resolve(new Map());
    const { userId } = owner;
    return new Promise((resolve, reject) => {
      const entry = { owner, shots, resolve, reject };
      const round = this.waiting.get(userId);
      if (round) return void round.push(entry);
      const entries = [entry];
      this.waiting.set(userId, entries);
      // Written after the user's write under way (if any); pictures that come until then join it.
      const done = (this.writing.get(userId) ?? Promise.resolve()).then(() => {
        if (this.waiting.get(userId) === entries) this.waiting.delete(userId);
        return this.writeRound(userId, entries);
      });
      this.writing.set(userId, done);
      void done.finally(() => {
        if (this.writing.get(userId) === done) this.writing.delete(userId);
      });
    });
  }

  /** Writes the pictures of one round (one user, any tasks): one lock and count, one insert of their records. */
  private async writeRound(userId: string, entries: RoundEntry[]): Promise<void> {
    const named = entries.flatMap((e, entry) => e.shots.map((s) => ({ entry, seq: s.seq, jpeg: s.jpeg, filename: `step-${String(s.seq + 1).padStart(3, '0')}.jpg` })));
    try {
      const blobs = await putWholeManyWithinQuota(this.deps, named.map((s) => ({ data: s.jpeg, filename: s.filename })), { contentType: 'image/jpeg', userId, perFile: MAX_PICTURE_BYTES, kind: 'picture' });
      const kept = named.flatMap((s, i) => (blobs[i] ? [{ ...s, blob: blobs[i] }] : []));
      entries.forEach((e, entry) => {
        const left = e.shots.length - kept.filter((k) => k.entry === entry).length;
        if (left) this.deps.logger.info({ sessionId: e.owner.sessionId, taskId: e.owner.taskId, left }, 'step pictures past the storage quota are not kept');
      });
      let records;
      try {
        records = await this.deps.files.createManyFromBlobs(
          kept.map((k) => ({ userId, blob: { ...k.blob, contentType: 'image/jpeg' }, originalName: k.filename, kind: 'picture', sessionId: entries[k.entry].owner.sessionId, taskId: entries[k.entry].owner.taskId })),
        );
      } catch (err) {
        await Promise.all(kept.map((k) => this.deps.blobs.delete(k.blob.blobId).catch(() => undefined)));
        throw err;
      }
      const files = entries.map(() => new Map<number, string>());
      records.forEach((r, i) => files[kept[i].entry].set(kept[i].seq, r._id));
      entries.forEach((e, entry) => e.resolve(files[entry]));
    } catch (err) {
      entries.forEach((e) => e.reject(err));
    }
  }
}
