import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import type { Store } from '../../store/store';
import { currentUser } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { createChatCompletions } from '../openai/chat-completions';
import { modelNotFound, OpenAiCompatError, toOpenAiError } from '../openai/openai-errors';
import { CHAT_MODEL_ID, chatCompletionRequestSchema, modelListSchema, modelSchema, openAiErrorSchema } from '../../contracts/schemas/chat.schema';
import { toServiceError } from '../../contracts/schemas/validation';
import type { SessionsService } from '../../sessions/sessions.service';
import type { z } from 'zod';
import { send } from '../respond';

/** When the one model appeared (Unix seconds); fixed so clients may cache the list. */
const MODEL_CREATED = 1_767_225_600;
const MODEL: z.infer<typeof modelSchema> = { id: CHAT_MODEL_ID, object: 'model', created: MODEL_CREATED, owned_by: 'browser-agent-service' };

/**
 * The OpenAI-compatible endpoints, usable unchanged by the official SDKs with
 * `baseURL = {base_url}/v1`. Every error is `{error:{message,type,code}}`.
 */
export function openAiRoutes(deps: { config: Config; store: Store; redis: Redis; sessions: SessionsService; auth: RequestHandler; logger: Logger; body: RequestHandler }): Router {
  const router = Router();
  const chat = createChatCompletions(deps);
  // The same counter as the other task-starting calls ("start"), answered in the OpenAI shape.
  const limit = rateLimit({
    redis: deps.redis,
    name: 'start',
    limit: deps.config.RATE_LIMIT_PER_MINUTE,
    windowMs: 60_000,
    key: (req) => req.user?._id ?? req.ip ?? 'unknown',
    reject: (res, err) => send(res, openAiErrorSchema, 429, toOpenAiError(err).toBody()),
  });

  router.get('/v1/models', deps.auth, (_req, res) => {
    const list: z.infer<typeof modelListSchema> = { object: 'list', data: [MODEL] };
    send(res, modelListSchema, 200, list);
  });

  router.get('/v1/models/:model', deps.auth, (req, res) => {
    if (req.params.model !== CHAT_MODEL_ID) throw new OpenAiCompatError(404, `The model '${req.params.model}' does not exist`, 'invalid_request_error', 'model_not_found');
    send(res, modelSchema, 200, MODEL);
  });

  router.post('/v1/chat/completions', deps.auth, limit, deps.body, async (req, res) => {
    const parsed = chatCompletionRequestSchema.safeParse(req.body ?? {});
    if (!parsed.success) {
      const e = toServiceError(parsed.error, req.body ?? {});
      throw new OpenAiCompatError(400, e.message, 'invalid_request_error', e.code.toLowerCase());
    }
    const body = parsed.data;
    if (body.model !== CHAT_MODEL_ID) throw modelNotFound(body.model);
    const run = await chat.begin(currentUser(req), body);
    if (body.stream) await chat.stream(run, res, { includeUsage: body.stream_options?.include_usage === true });
    else await chat.answer(run, res);
  });

  router.use(openAiErrorHandler(deps.logger));

  return router;
}

/** Errors of /v1 (malformed JSON, auth, limits, the service's own) in the OpenAI shape. */
export function openAiErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (!req.path.startsWith('/v1/') && req.baseUrl !== '/v1') return next(err);
    const bp = err as { type?: string };
    const e =
      bp?.type === 'entity.parse.failed'
        ? new OpenAiCompatError(400, 'Malformed JSON in request body', 'invalid_request_error', 'invalid_params')
        : bp?.type === 'entity.too.large'
          ? new OpenAiCompatError(413, 'Request body is too large', 'invalid_request_error', 'payload_too_large')
          : toOpenAiError(err);
    if (e.status >= 500) logger.error({ err, path: req.path }, 'request failed');
    if (res.headersSent) return;
    send(res, openAiErrorSchema, e.status, e.toBody());
  };
}
