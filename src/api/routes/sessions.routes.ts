import { Router, type RequestHandler } from 'express';
import type { Config } from '../../config';
import { ServiceError } from '../../errors';
import type { MessageHandler } from '../messages.handler';
import { currentUser } from '../middleware/auth';
import { sendMessageSchema } from '../schemas/message.schema';
import { runTaskSchema, startSessionSchema } from '../schemas/session.schema';
import { assertOutputSchemaUsable } from '../schemas/task.schema';
import { parseRequest } from '../schemas/validation';
import type { SessionsService } from '../sessions.service';
import { send } from '../respond';
import * as R from '../schemas/responses.schema';
import type { z } from 'zod';

/** POST /start/start-session, /start/run-task, /start/send-message. */
export function sessionsRoutes(deps: { config: Config; sessions: SessionsService; messages: MessageHandler; auth: RequestHandler; limit: RequestHandler }): Router {
  const { config, sessions } = deps;
  const router = Router();
  const base = config.PUBLIC_BASE_URL;

  const sessionResource = (sessionId: string, balance: number, initialPrompt: string, message: string): z.output<typeof R.sessionResourceSchema> => {
    const token = sessions.viewToken(sessionId);
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
      expiresIn: config.SESSION_IDLE_TIMEOUT_MS,
      balance,
      message,
    };
  };

  router.post('/start/start-session', deps.auth, deps.limit, async (req, res) => {
    const body = parseRequest(startSessionSchema, req.body ?? {});
    await assertOutputSchemaUsable(body.task, 'task.');
    const started = await sessions.start(currentUser(req), body.task, body);
    send(res, R.sessionResourceSchema, 200, {
      ...sessionResource(started.sessionId, started.balance, body.task?.prompt ?? '', started.taskId ? 'Session started; the task is running' : 'Session started'),
      ...(started.taskId ? { taskId: started.taskId } : {}),
    });
  });

  router.post('/start/run-task', deps.auth, deps.limit, async (req, res) => {
    const raw = (req.body ?? {}) as Record<string, unknown>;
    if (!raw.task || typeof raw.task !== 'object') throw new ServiceError('MISSING_REQUIRED_FIELD', 'task.prompt is required', 400, { field: 'task.prompt' });
    const body = parseRequest(runTaskSchema, raw);
    if (!body.task.prompt.trim()) throw new ServiceError('INVALID_TASK_DETAILS', 'task.prompt must not be empty', 400, { field: 'task.prompt' });
    await assertOutputSchemaUsable(body.task, 'task.');
    const started = await sessions.start(currentUser(req), { ...body.task, terminateOnCompletion: true }, body);
    const answer = await deps.messages.inlineAnswer(started.sessionId, started.taskId!);
    res.status(answer.status).json(answer.body);
  });

  router.post('/start/send-message', deps.auth, deps.limit, async (req, res) => {
    const { sessionId, message } = parseRequest(sendMessageSchema, req.body ?? {});
    const answer = await deps.messages.handle(currentUser(req), sessionId, message);
    res.status(answer.status).json(answer.body);
  });

  return router;
}
