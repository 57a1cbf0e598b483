import { Router, type Request, type RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Config } from '../../config';
import { NotFoundError, ServiceError } from '../../contracts/errors';
import { linkSecret } from '../../files/links';
import { playwrightScript } from '../../agent/playwright-export';
import { checkRecordPageToken, RECORD_PAGE_CSP, recordPage, recordPageToken } from '../../recording/record-page';
import type { Store } from '../../store/store';
import { currentUser } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { parseRequest } from '../../contracts/schemas/validation';
import { send } from '../respond';
import * as R from '../../contracts/schemas/responses.schema';

/** Like /policies: 60 requests a minute per user. */
export const RECORDINGS_RATE_LIMIT = { limit: 60, windowMs: 60_000 } as const;

const recordingQuery = z.object({ format: z.enum(['json', 'playwright']).default('json') }).strict();

type RecordingsDeps = { config: Config; store: Pick<Store, 'tasks' | 'recordings' | 'files' | 'blobs'>; auth: RequestHandler; redis: Redis; rateLimit?: { limit: number; windowMs: number } };

const taskNotFound = () => new NotFoundError('TASK_NOT_FOUND', 'Task not found');

/** The signed address of a task's record page, valid as long as its pictures are kept (DOWNLOAD_TTL_MS; kept until deleted: a week at a time). */
function recordPageUrl(config: Config, sessionId: string, taskId: string): string {
  const validFor = config.DOWNLOAD_TTL_MS > 0 ? config.DOWNLOAD_TTL_MS : 7 * 24 * 60 * 60 * 1000;
  return `${config.PUBLIC_BASE_URL}/recordings/${sessionId}/${taskId}?token=${recordPageToken(linkSecret(config), sessionId, taskId, Date.now() + validFor)}`;
}

/** The task a signed page is for, and its owner; a wrong token is a 404 (nothing to tell apart). */
async function signedTask(deps: RecordingsDeps, req: Request) {
  const { store } = deps;
  const sessionId = String(req.params.sessionId);
  const taskId = String(req.params.taskId);
  if (!checkRecordPageToken(linkSecret(deps.config), sessionId, taskId, req.query.token)) throw taskNotFound();
  const owner = await store.tasks.ownerOf(sessionId, taskId);
  if (!owner) throw taskNotFound();
  // A deleted recording's page and pictures are gone for every token ever signed for them.
  if (!(await store.recordings.header(taskId, owner.userId))) throw taskNotFound();
  return { sessionId, taskId, ...owner };
}

/** The caller's task of the request's session and task ids, or TASK_NOT_FOUND. */
async function ownedTask(deps: RecordingsDeps, req: Request) {
  const sessionId = String(req.params.sessionId);
  const taskId = String(req.params.taskId);
  const task = await deps.store.tasks.owned(currentUser(req)._id, taskId);
  if (!task || task.sessionId !== sessionId) throw taskNotFound();
  return { sessionId, taskId, task };
}

/** The owner's recording of a task (with the key, rate-limited): read as JSON or a Playwright script, or deleted. */
function recordingRoutes(router: Router, deps: RecordingsDeps): void {
  const { store } = deps;
  const limit = rateLimit({ redis: deps.redis, name: 'recordings', ...(deps.rateLimit ?? RECORDINGS_RATE_LIMIT), key: (req) => req.user?._id ?? req.ip ?? 'unknown' });
  router.get('/task/:sessionId/:taskId/recording', deps.auth, limit, async (req, res) => {
    const user = currentUser(req);
    const { format } = parseRequest(recordingQuery, req.query);
    const { sessionId, taskId, task } = await ownedTask(deps, req);
    const view = await store.tasks.get(sessionId, taskId);
    const steps = await store.recordings.list(taskId, user._id);
    if (format === 'playwright') {
      // attachment() would take the type from the .ts extension (an MPEG stream): the type is set after it.
      res.status(200).attachment(`${taskId}.spec.ts`).type('application/typescript; charset=utf-8').send(playwrightScript({ sessionId, taskId, steps }));
      return;
    }
    send(res, R.recordingSchema, 200, { success: true, sessionId, taskId, status: task.status, ...(view?.replayOf ? { replayOf: view.replayOf } : {}), pageUrl: recordPageUrl(deps.config, sessionId, taskId), steps });
  });

  /** Deletes the task's recording: its steps, pictures and record page (owner only; another user's is a 404). */
  router.delete('/task/:sessionId/:taskId/recording', deps.auth, limit, async (req, res) => {
    const user = currentUser(req);
    const { sessionId, taskId, task } = await ownedTask(deps, req);
    // A running task would go on writing steps into a recording said to be deleted.
    if (['running', 'paused', 'guardrail_trigger', 'pending'].includes(task.status)) throw new ServiceError('INVALID_STATE', 'The task is still running: stop it before deleting its recording', { status: task.status });
    const steps = await store.recordings.delete(taskId, user._id);
    const pictures = await store.files.deletePicturesOfTask(taskId, user._id);
    send(res, R.recordingDeletedSchema, 200, { success: true, sessionId, taskId, deletedSteps: steps, deletedPictures: pictures });
  });
}

/** The step-by-step record page and its pictures, signed like the live view page (no key). */
function recordPageRoutes(router: Router, deps: RecordingsDeps): void {
  const { store } = deps;
  router.get('/recordings/:sessionId/:taskId', async (req, res) => {
    const task = await signedTask(deps, req);
    const steps = await store.recordings.list(task.taskId, task.userId);
    const token = encodeURIComponent(String(req.query.token));
    const html = recordPage({ ...task, steps, pictureUrl: (seq) => `/recordings/${task.sessionId}/${task.taskId}/pictures/${seq}?token=${token}` });
    res.status(200).set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'Content-Security-Policy': RECORD_PAGE_CSP, 'X-Content-Type-Options': 'nosniff' }).type('html').send(html);
  });

  /** A step's picture (same token). */
  router.get('/recordings/:sessionId/:taskId/pictures/:seq', async (req, res) => {
    const task = await signedTask(deps, req);
    const seq = Number(req.params.seq);
    const step = Number.isInteger(seq) && seq >= 0 ? (await store.recordings.list(task.taskId, task.userId)).find((s) => s.seq === seq) : undefined;
    const file = step?.pictureFileId ? await store.files.get(step.pictureFileId) : null;
    if (!file || file.userId !== task.userId || file.kind !== 'picture' || file.taskId !== task.taskId) throw new NotFoundError('NOT_FOUND', 'Picture not found');
    res.status(200).set({ 'Cache-Control': 'private, max-age=3600', 'X-Content-Type-Options': 'nosniff', 'Content-Length': String(file.size) }).type('image/jpeg');
    (await store.blobs.get(file.blobId)).on('error', () => res.destroy()).pipe(res);
  });
}

/**
 * GET /task/:sessionId/:taskId/recording: the owner's record of what was done in a task
 * (JSON), or a Playwright script that does it again (`?format=playwright`). Anyone else: 404.
 */
export function recordingsRoutes(deps: RecordingsDeps): Router {
  const router = Router();
  recordingRoutes(router, deps);
  recordPageRoutes(router, deps);
  return router;
}
