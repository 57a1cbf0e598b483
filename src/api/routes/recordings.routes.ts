import { Router, type RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Config } from '../../config';
import { NotFoundError } from '../../errors';
import { playwrightScript } from '../../recording/playwright-export';
import type { Store } from '../../store/store';
import { currentUser } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { parseRequest } from '../schemas/validation';
import { send } from '../respond';
import * as R from '../schemas/responses.schema';

/** Like /policies: 60 requests a minute per user. */
export const RECORDINGS_RATE_LIMIT = { limit: 60, windowMs: 60_000 } as const;

const recordingQuery = z.object({ format: z.enum(['json', 'playwright']).default('json') }).strict();

/**
 * GET /task/:sessionId/:taskId/recording: the owner's record of what was done in a task
 * (JSON), or a Playwright script that does it again (`?format=playwright`). Anyone else: 404.
 */
export function recordingsRoutes(deps: { config: Config; store: Pick<Store, 'tasks' | 'recordings'>; auth: RequestHandler; redis: Redis }): Router {
  const { store } = deps;
  const router = Router();
  const limit = rateLimit({ redis: deps.redis, name: 'recordings', ...RECORDINGS_RATE_LIMIT, key: (req) => req.user?._id ?? req.ip ?? 'unknown' });
  router.get('/task/:sessionId/:taskId/recording', deps.auth, limit, async (req, res) => {
    const user = currentUser(req);
    const { format } = parseRequest(recordingQuery, req.query);
    const sessionId = String(req.params.sessionId);
    const taskId = String(req.params.taskId);
    const task = await store.tasks.owned(user._id, taskId);
    if (!task || task.sessionId !== sessionId) throw new NotFoundError('TASK_NOT_FOUND', 'Task not found');
    const view = await store.tasks.get(sessionId, taskId);
    const steps = await store.recordings.list(taskId, user._id);
    if (format === 'playwright') {
      // attachment() would take the type from the .ts extension (an MPEG stream): the type is set after it.
      res.status(200).attachment(`${taskId}.spec.ts`).type('application/typescript; charset=utf-8').send(playwrightScript({ sessionId, taskId, steps }));
      return;
    }
    send(res, R.recordingSchema, 200, { success: true, sessionId, taskId, status: task.status, ...(view?.replayOf ? { replayOf: view.replayOf } : {}), steps });
  });
  return router;
}
