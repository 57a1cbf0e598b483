import type { CDPSession, Page } from 'playwright-core';
import type { Logger } from '../logger';
import type { BlobStore } from '../profiles/contracts';
import type { FilesRepository } from '../store/files.repository';
import { putWholeManyWithinQuota, type StorageQuota } from '../store/storage-quota';
import type { StepOwner, StepPictureSource } from './recorder';

/** JPEG quality of a step's picture: enough to see what happened, small enough to keep for every step. */
const QUALITY = 50;
const SHOT_TIMEOUT_MS = 2_000;
/** A picture is never larger than this (a viewport at quality 50 is far below). */
const MAX_PICTURE_BYTES = 2 * 1024 * 1024;

/** One DevTools session per page for its pictures, opened on first use. */
const sessions = new WeakMap<Page, Promise<CDPSession>>();

/**
 * The viewport as JPEG, straight from DevTools with speed before size (about half the time of
 * Playwright's screenshot, which waits for fonts and settles animations first).
 */
async function shoot(page: Page): Promise<Buffer> {
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
 * The recorder hands a task's pictures over together: they are stored with one lock, one
 * count and one insert of their records.
 */
export class StepPictures implements StepPictureSource {
  constructor(private readonly deps: { files: FilesRepository; blobs: BlobStore; quota: StorageQuota; logger: Logger; pageOf: (sessionId: string) => Page | undefined }) {}

  async shoot(sessionId: string): Promise<Buffer | undefined> {
    const page = this.deps.pageOf(sessionId);
    if (!page || page.isClosed()) return undefined;
    return shoot(page);
  }

  async store(owner: StepOwner, shots: { seq: number; jpeg: Buffer }[]): Promise<Map<number, string>> {
    const named = shots.map((s) => ({ ...s, filename: `step-${String(s.seq + 1).padStart(3, '0')}.jpg` }));
    const blobs = await putWholeManyWithinQuota(this.deps, named.map((s) => ({ data: s.jpeg, filename: s.filename })), { contentType: 'image/jpeg', userId: owner.userId, perFile: MAX_PICTURE_BYTES, kind: 'picture' });
    const kept = named.flatMap((s, i) => (blobs[i] ? [{ seq: s.seq, filename: s.filename, blob: blobs[i] }] : []));
    if (kept.length < named.length) this.deps.logger.info({ sessionId: owner.sessionId, taskId: owner.taskId, left: named.length - kept.length }, 'step pictures past the storage quota are not kept');
    try {
      const records = await this.deps.files.createManyFromBlobs(
        kept.map((k) => ({ userId: owner.userId, blob: { ...k.blob, contentType: 'image/jpeg' }, originalName: k.filename, kind: 'picture', sessionId: owner.sessionId, taskId: owner.taskId })),
      );
      return new Map(records.map((r, i) => [kept[i].seq, r._id]));
    } catch (err) {
      await Promise.all(kept.map((k) => this.deps.blobs.delete(k.blob.blobId).catch(() => undefined)));
      throw err;
    }
  }
}
