import { Router, type RequestHandler } from 'express';
import type { Config } from '../../config';
import type { MessageHandler } from '../messages.handler';
import { currentUser } from '../middleware/auth';
import { sendMessageSchema } from '../../contracts/schemas/message.schema';
import { parseRunTask, sessionEventsQuerySchema, startSessionSchema } from '../../contracts/schemas/session.schema';
import { wireEvent } from '../../events/publisher';
import { parseRequest } from '../../contracts/schemas/validation';
import type { SessionsService } from '../../sessions/sessions.service';
import { send } from '../respond';
import * as R from '../../contracts/schemas/responses.schema';
import type { z } from 'zod';

type SessionsRoutesDeps = { config: Config; sessions: SessionsService; messages: MessageHandler; auth: RequestHandler; limit: RequestHandler; body: RequestHandler };

/** A started session as its starter sees it: its id, where to watch it live, its bounds. */
function sessionResource(deps: SessionsRoutesDeps, sessionId: string, balance: number, initialPrompt: string, message: string): z.output<typeof R.sessionResourceSchema> {
  const base = deps.config.PUBLIC_BASE_URL;
  const token = deps.sessions.viewToken(sessionId);
  return {
    success: true,
    sessionId,
    socketURL: base,
    streaming: {
      webRTCURL: `${base}/whep/${sessionId}?token=${token}`,
      webViewURL: `${base}/view/${sessionId}?token=${token}`,
      dimensions: { width: 1024, height: 600 },
    },
    initialPrompt,
    expiresIn: deps.config.SESSION_IDLE_TIMEOUT_MS,
    balance,
    message,
  };
}

/**
 * GET /start/sessions/:sessionId/events: an ended session's last events stay readable by its
 * owner for as long as they are kept. A read like task polling: outside the per-user request
 * limit of the session endpoints.
 */
const sessionEvents =
  (sessions: SessionsService): RequestHandler =>
  async (req, res) => {
    const { after, limit } = parseRequest(sessionEventsQuerySchema, req.query);
    const page = await sessions.events(currentUser(req), String(req.params.sessionId), after, limit);
    const events = page.events.map((e) => ({ event: e.event, ...wireEvent(e) }));
    res.json({
      success: true,
      sessionId: page.session._id,
      status: page.session.status,
      ...(page.session.endReason ? { endReason: page.session.endReason } : {}),
      events,
      lastSeq: page.events.length ? page.events[page.events.length - 1].seq : after,
      hasMore: page.hasMore,
    });
  };

/** POST /start/start-session, /start/run-task, /start/send-message. */
export function sessionsRoutes(deps: SessionsRoutesDeps): Router {
  const { sessions } = deps;
  const router = Router();

  router.post('/start/start-session', deps.auth, deps.limit, deps.body, async (req, res) => {
    const body = parseRequest(startSessionSchema, req.body ?? {});
    const started = await sessions.start(currentUser(req), body.task, { ...body, reachOutModeGiven: reachOutModeGiven(req.body) });
    send(res, R.sessionResourceSchema, 200, {
      ...sessionResource(deps, started.sessionId, started.balance, body.task?.prompt ?? '', started.taskId ? 'Session started; the task is running' : 'Session started'),
      ...(started.taskId ? { taskId: started.taskId } : {}),
    });
  });

  router.post('/start/run-task', deps.auth, deps.limit, deps.body, async (req, res) => {
    const body = parseRunTask((req.body ?? {}) as Record<string, unknown>);
    const started = await sessions.start(currentUser(req), { ...body.task, terminateOnCompletion: true }, { ...body, reachOutModeGiven: reachOutModeGiven(req.body), singleTask: true });
    const answer = await deps.messages.inlineAnswer(started.sessionId, started.taskId!);
    res.status(answer.status).json(answer.body);
  });

  router.post('/start/send-message', deps.auth, deps.limit, deps.body, async (req, res) => {
    const { sessionId, message } = parseRequest(sendMessageSchema, req.body ?? {});
    const answer = await deps.messages.handle(currentUser(req), sessionId, message);
    res.status(answer.status).json(answer.body);
  });

  router.get('/start/sessions/:sessionId/events', deps.auth, sessionEvents(sessions));
  return router;
}

/** Whether the request names reachOutMode itself (null counts as left out, like the other defaults). */
export function reachOutModeGiven(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as Record<string, unknown>).reachOutMode != null;
}
