import { Context } from '@temporalio/activity';
import { failureOf } from '../contracts/errors';
import { sessionViewToken } from '../contracts/link-tokens';
import { TERMINAL_TASK_STATUSES } from '../contracts/session-types';
import type { ChatDeliveryInput, DeliveryResult } from '../contracts/trigger-types';
import { openChatConnection } from '../environments/chat-connection';
import { sendChatMessage } from '../environments/chat-sender';
import { guardrailText, resultText } from '../environments/reach-out';
import { linkSecret } from '../files/links';
import { payloadKey } from '../temporal/connection';
import { outcomeMissing, settleAttempt } from './delivery-attempt';
import { DELIVERY_ATTEMPT_TIMEOUT_MS, type DeliveryContext } from './delivery-context';

/**
 * One attempt to send a message to an environment's chat connection, with the
 * environment's sealed credentials, opened only here: a trigger run's outcome
 * (deliveryMode bot), or a session's reach-out. A reach-out is sent only when nobody
 * watches the session (looked at once, on the first attempt) and only while its
 * guardrail still waits for an answer.
 */
export async function deliverToChat(ctx: DeliveryContext, input: ChatDeliveryInput): Promise<DeliveryResult> {
  const { config, records } = ctx;
  const attempt = Context.current().info.attempt;
  const log = ctx.logger.child({ deliveryId: input.deliveryId, attempt, environmentId: input.environmentId });
  const skipped = (why: string): DeliveryResult => {
    log.info({ sessionId: input.target.kind === 'task' ? input.target.sessionId : undefined }, `reach-out not sent: ${why}`);
    return { deliveryId: input.deliveryId, status: 'skipped', attempts: null, statusCode: null };
  };
  if (input.reachOut && attempt === 1 && ctx.watchers && (await ctx.watchers.watched(input.target.sessionId))) return skipped('the session is watched');
  const text = await chatText(ctx, input);
  if (text === null) {
    if (input.reachOut === 'guardrail') return skipped('the question was answered');
    await records.open(input);
    return outcomeMissing(ctx, input, attempt);
  }
  await records.open(input);
  const env = await ctx.store.environments.get(input.environmentId, input.userId);
  if (!env?.chat) {
    const error = env ? 'The environment has no chat connection' : 'The environment no longer exists';
    await records.attempt(input, { attempt, status: 'failed', statusCode: null, error });
    throw failureOf('CHAT_NOT_CONNECTED', error);
  }
  const fields = openChatConnection(payloadKey(config), env._id, env.chat);
  const result = await sendChatMessage(env.chat.provider, fields, text, { baseUrls: config.CHAT_API_BASE_URLS, timeoutMs: DELIVERY_ATTEMPT_TIMEOUT_MS, fetch: ctx.send });
  return settleAttempt(ctx, input, attempt, result, 'CHAT', log.child({ provider: env.chat.provider }));
}

/** The message's text, read from the stored run or task; null while there is nothing (yet) to say. */
async function chatText(ctx: DeliveryContext, input: ChatDeliveryInput): Promise<string | null> {
  if (input.reachOut === undefined) {
    const run = await ctx.runs.getById(input.target.runId);
    if (!run || run.status === 'running') return null;
    return run.status === 'completed'
      ? `Trigger "${input.triggerName}" finished:\n${run.result ?? ''}`
      : `Trigger "${input.triggerName}" ${run.status === 'timed_out' ? 'timed out' : 'failed'} (${run.code ?? 'RUN_FAILED'}): ${run.error ?? 'The run failed'}`;
  }
  const { sessionId, taskId } = input.target;
  const task = await ctx.store.tasks.get(sessionId, taskId);
  if (input.reachOut === 'guardrail') {
    if (task?.status !== 'guardrail_trigger' || !task.guardrail) return null;
    return guardrailText({ question: task.guardrail.value, webViewURL: `${ctx.config.PUBLIC_BASE_URL}/view/${sessionId}?token=${sessionViewToken(linkSecret(ctx.config), sessionId)}` });
  }
  return task && TERMINAL_TASK_STATUSES.includes(task.status) ? resultText(task) : null;
}
