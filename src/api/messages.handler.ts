import { fileLinks } from '../files/links';
import type { Config } from '../config';
import type { UserRecord } from '../store/users.repository';
import { pendingEnvelope, taskEnvelope } from '../contracts/envelopes';
import { guardrailMessageSchema, interactionMessageSchema, messageEnvelopeSchema, newTaskMessageSchema, stateMessageSchema } from '../contracts/schemas/message.schema';
import { parseRequest } from '../contracts/schemas/validation';
import type { SessionsService } from '../sessions/sessions.service';

export interface MessageAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * One message to a session (newTask, state, interaction, guardrail), validated the same
 * way whether it came over HTTP (send-message) or the socket.
 */
export function createMessageHandler(deps: { config: Config; sessions: SessionsService }) {
  const { config, sessions } = deps;

  /** The inline answer: the outcome if the task settles within the inline wait, else the pending marker. */
  const inlineAnswer = async (sessionId: string, taskId: string): Promise<MessageAnswer> => {
    const outcome = await sessions.awaitTask(sessionId, taskId);
    if (outcome) return taskEnvelope(fileLinks(config), outcome, { withCompletedAt: false });
    return { status: 200, body: pendingEnvelope(config.PUBLIC_BASE_URL, sessionId, taskId) };
  };

  return {
    inlineAnswer,
    /**
     * `over: 'socket'`: the message came on the session's own live channel, which the end of
     * the session closes; a terminate is then answered at once (the channel's end_session
     * follows once the slot is given back) instead of after the end.
     */
    async handle(user: UserRecord, sessionId: string, message: unknown, over: 'http' | 'socket' = 'http'): Promise<MessageAnswer> {
      const { actionType } = parseRequest(messageEnvelopeSchema, message, 'message.');
      switch (actionType) {
        case 'newTask': {
          const params = parseRequest(newTaskMessageSchema, message, 'message.');
          const taskId = await sessions.newTask(user, sessionId, params);
          return inlineAnswer(sessionId, taskId);
        }
        case 'state': {
          const { newState } = parseRequest(stateMessageSchema, message, 'message.');
          return { status: 200, body: { success: true, message: await sessions.changeState(user, sessionId, newState, { awaitEnd: over === 'http' }) } };
        }
        case 'guardrail': {
          const { prompt } = parseRequest(guardrailMessageSchema, message, 'message.');
          return { status: 200, body: { success: true, message: await sessions.answerGuardrail(user, sessionId, prompt) } };
        }
        case 'interaction': {
          const { action } = parseRequest(interactionMessageSchema, message, 'message.');
          return { status: 200, body: { success: true, message: await sessions.interact(user, sessionId, action) } };
        }
      }
    },
  };
}

export type MessageHandler = ReturnType<typeof createMessageHandler>;
