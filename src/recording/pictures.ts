import type { CDPSession, Page } from 'playwright-core';
import type { Logger } from '../logger';
import type { BlobStore } from '../profiles/contracts';
import type { FilesRepository } from '../store/files.repository';
import type { RecordingsRepository } from '../store/recordings.repository';
import { putWholeWithinQuota, type StorageQuota } from '../store/storage-quota';
import type { StepOwner } from './recorder';
import type { RecordedStep } from './types';

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
 */
export class StepPictures {
  constructor(private readonly deps: { files: FilesRepository; blobs: BlobStore; quota: StorageQuota; recordings: RecordingsRepository; logger: Logger; pageOf: (sessionId: string) => Page | undefined }) {}

  async take(owner: StepOwner, step: RecordedStep): Promise<string | undefined> {
    const page = this.deps.pageOf(owner.sessionId);
    if (!page || page.isClosed()) return undefined;
    let jpeg: Buffer;
    try {
      jpeg = await shoot(page);
    } catch (err) {
      this.deps.logger.debug({ sessionId: owner.sessionId, taskId: owner.taskId, err: String(err) }, 'no picture of the step');
      return undefined;
    }
    const filename = `step-${String(step.seq + 1).padStart(3, '0')}.jpg`;
    const blob = await putWholeWithinQuota(this.deps, jpeg, { filename, contentType: 'image/jpeg', userId: owner.userId, perFile: MAX_PICTURE_BYTES, kind: 'picture' });
    try {
      const rec = await this.deps.files.createFromBlob({ userId: owner.userId, blob: { ...blob, contentType: 'image/jpeg' }, originalName: filename, kind: 'picture', sessionId: owner.sessionId, taskId: owner.taskId });
      await this.deps.recordings.setPicture(owner.taskId, step.seq, rec._id);
      step.pictureFileId = rec._id;
      return rec._id;
    } catch (err) {
      await this.deps.blobs.delete(blob.blobId).catch(() => undefined);
      throw err;
    }
  }
}
