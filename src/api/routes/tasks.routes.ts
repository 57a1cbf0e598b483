import { fileLinks } from '../../files/links';
import { Router } from 'express';
import type { Config } from '../../config';
import { NotFoundError } from '../../contracts/errors';
import { taskEnvelope } from '../../contracts/envelopes';
import type { SessionsService } from '../../sessions/sessions.service';
import type { Watchers } from '../../environments/reach-out';

/** GET /task/:sessionId/:taskId: no key needed (the session id is the capability), no rate limit. */
export function tasksRoutes(deps: { config: Config; sessions: SessionsService; watchers: Watchers }): Router {
  const router = Router();
  router.get('/task/:sessionId/:taskId', async (req, res) => {
    const view = await deps.sessions.task(req.params.sessionId, req.params.taskId);
    if (!view) throw new NotFoundError('TASK_NOT_FOUND', 'Task not found');
    // Someone polls the session: reach-out stays quiet for a while.
    await deps.watchers.polled(view.sessionId);
    const env = taskEnvelope(fileLinks(deps.config), view, { withCompletedAt: true });
    res.status(env.status).json(env.body);
  });
  return router;
}
