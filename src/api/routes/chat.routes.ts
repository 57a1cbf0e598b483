import express, { Router } from 'express';
import type { Config } from '../../config';
import { openChatConnection, WEBHOOK_SECRET_FIELD } from '../../environments/chat-connection';
import { CHAT_PROVIDERS, type ChatProvider } from '../../contracts/schemas/chat-connection.schema';
import { INBOUND_PROVIDERS, parseChatUpdate, verifyChatWebhook } from '../../environments/reach-out';
import { isServiceError } from '../../contracts/errors';
import type { Logger } from '../../logger';
import type { EnvironmentRecord } from '../../store/environments.repository';
import { ProfileLocks } from '../../store/profile-locks';
import type { Store } from '../../store/store';
import type { SessionsService } from '../../sessions/sessions.service';
import { send } from '../respond';
import * as R from '../../contracts/schemas/responses.schema';

/** What `PUT /environments/:id/chat` tells the user about taking replies from the chat. */
export function chatRepliesView(config: Pick<Config, 'PUBLIC_BASE_URL'>, provider: ChatProvider, environmentId: string, webhookSecret: string): Record<string, unknown> | null {
  if (!INBOUND_PROVIDERS.includes(provider)) return null;
  const url = `${config.PUBLIC_BASE_URL}/chat/${provider}/${environmentId}`;
  if (provider === 'telegram') return { url, secretToken: webhookSecret, note: 'Call setWebhook with this url and secret_token; shown only now' };
  if (provider === 'slack') return { url, note: 'Request URL of the Slack app\'s Events API (message events); requests are checked with the signing secret' };
  return { url, verifyToken: webhookSecret, note: 'Callback URL and verify token of the WhatsApp webhook; requests are checked with the app secret; shown only now' };
}

type ChatRoutesDeps = { store: Store; sessions: SessionsService; secretKey: Buffer; logger: Logger };

/** A bare answer without a body: nothing to tell a caller that is not the provider. */
const nothing = (res: express.Response, status: number) => res.status(status).type('text/plain').send('');

/** The environment's chat connection of that provider, opened; null when there is none (or it cannot be opened). */
async function chatConnection(deps: ChatRoutesDeps, provider: string, environmentId: string) {
  if (!CHAT_PROVIDERS.includes(provider as ChatProvider)) return null;
  const env = await deps.store.db.collection<EnvironmentRecord>('environments').findOne({ _id: environmentId });
  if (!env?.chat || env.chat.provider !== provider) return null;
  try {
    return { env, fields: openChatConnection(deps.secretKey, env._id, env.chat) };
  } catch {
    return null;
  }
}

/** The chat user's reply answers the guardrail of the live session on the environment, if any; a reply not taken is only logged. */
async function answerWithReply(deps: ChatRoutesDeps, locks: ProfileLocks, env: EnvironmentRecord, text: string, log: Logger): Promise<void> {
  const sessionId = await locks.holder({ kind: 'environment', id: env._id });
  const user = sessionId ? await deps.store.users.get(env.userId) : null;
  if (!sessionId || !user || user.status !== 'active') {
    log.info('chat reply with no live session on the environment');
    return;
  }
  try {
    await deps.sessions.answerGuardrail(user, sessionId, text);
    log.info({ sessionId }, 'guardrail answered from the chat');
  } catch (err) {
    if (!isServiceError(err)) throw err;
    log.info({ sessionId, code: err.code }, 'chat reply not taken');
  }
}

/** The provider's webhook call: signed or carrying our token, a JSON update; a reply is taken, anything else acknowledged. */
const chatWebhook =
  (deps: ChatRoutesDeps, locks: ProfileLocks, logger: Logger): express.RequestHandler<{ provider: string; environmentId: string }> =>
  async (req, res) => {
    const { provider, environmentId } = req.params;
    const found = await chatConnection(deps, provider, environmentId);
    if (!found) return nothing(res, 404);
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (!verifyChatWebhook(provider as ChatProvider, found.fields, req.headers, body)) return nothing(res, 401);
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return nothing(res, 400);
    }
    const update = parseChatUpdate(provider as ChatProvider, found.env.chat!.settings, json);
    if (update.kind === 'challenge') return send(res, R.chatWebhookAckSchema, 200, { challenge: update.challenge });
    // Providers retry anything but a 2xx: what we do not act on is still acknowledged.
    if (update.kind !== 'ignore' && update.text.trim()) await answerWithReply(deps, locks, found.env, update.text, logger.child({ provider, environmentId }));
    send(res, R.chatWebhookAckSchema, 200, { ok: true });
  };

/**
 * `POST /chat/:provider/:environmentId`: a provider's webhook bringing the chat user's
 * reply. No API key: the request must carry the provider's signature or our secret token
 * for that environment's connection; anything else is a bare 404 or 401. The reply answers
 * the guardrail of the live session on that environment, as send-message would.
 * Mounted before the JSON parser: signatures are computed over the raw body.
 */
export function chatRoutes(deps: ChatRoutesDeps): Router {
  const logger = deps.logger.child({ component: 'chat-replies' });
  const locks = new ProfileLocks(deps.store.db);
  const router = Router();
  const raw = express.raw({ type: () => true, limit: '1mb' });

  // WhatsApp (Meta) checks the callback URL once with a GET carrying our verify token.
  router.get('/chat/:provider/:environmentId', async (req, res) => {
    const found = req.params.provider === 'whatsapp' ? await chatConnection(deps, req.params.provider, req.params.environmentId) : null;
    if (!found) return nothing(res, 404);
    const token = String(req.query['hub.verify_token'] ?? '');
    if (req.query['hub.mode'] !== 'subscribe' || !found.fields[WEBHOOK_SECRET_FIELD] || token !== found.fields[WEBHOOK_SECRET_FIELD]) return nothing(res, 401);
    res.type('text/plain').send(String(req.query['hub.challenge'] ?? ''));
  });

  router.post('/chat/:provider/:environmentId', raw, chatWebhook(deps, locks, logger));
  return router;
}
