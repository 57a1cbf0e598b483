/**
 * The caller of one MCP connection and the steps its tools share: the user as stored now,
 * the start counted against the per-minute limit, the session it owns, the task awaited
 * with progress, and the task's envelope as a tool result.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../../config';
import { taskEnvelope } from '../../contracts/envelopes';
import { RateLimitError, ServiceError } from '../../contracts/errors';
import type { TaskView } from '../../contracts/session-types';
import { fileLinks } from '../../files/links';
import type { Logger } from '../../logger';
import type { SessionsService } from '../../sessions/sessions.service';
import type { SessionRecord } from '../../store/sessions.repository';
import type { Store } from '../../store/store';
import type { UserRecord } from '../../store/users.repository';
import { countRequest } from '../middleware/rate-limit';
import { result, type ToolExtra } from './tool-call';

const PROGRESS_POLL_MS = 500;

export interface McpDeps {
  config: Config;
  store: Store;
  sessions: SessionsService;
  logger: Logger;
  /** Counts a task-starting call against the user's per-minute limit (shared with REST). */
  limit: { redis: import('ioredis').Redis; limit: number; windowMs: number };
}

/** One connection's caller: the services, the user whose API key opened it, its logger. */
export interface McpCaller {
  deps: McpDeps;
  user: UserRecord;
  logger: Logger;
}

export const freshUser = async (caller: McpCaller): Promise<UserRecord> => (await caller.deps.store.users.get(caller.user._id)) ?? caller.user;

export async function countStart(caller: McpCaller): Promise<void> {
  const { redis, limit, windowMs } = caller.deps.limit;
  const counted = await countRequest({ redis, name: 'start', limit, windowMs }, caller.user._id);
  if (!counted.allowed) throw new RateLimitError();
}

/** The caller's session, or null: another user's session looks exactly like an unknown one. */
export async function ownSession(caller: McpCaller, sessionId: string): Promise<SessionRecord | null> {
  const rec = await caller.deps.store.sessions.get(sessionId);
  return rec && rec.userId === caller.user._id ? rec : null;
}

/** The caller's session, or SESSION_NOT_FOUND. */
export async function owned(caller: McpCaller, sessionId: string): Promise<SessionRecord> {
  const rec = await ownSession(caller, sessionId);
  if (!rec) throw new ServiceError('SESSION_NOT_FOUND', 'Session not found');
  return rec;
}

/** The text line that sums up a task's envelope for a reader of the tool result. */
function envelopeLine(view: TaskView, body: { data?: { message?: string; value?: string }; error?: string }): string {
  if (view.status === 'task_completed') return body.data?.message ?? '';
  if (view.status === 'guardrail_trigger') return `The agent needs a human: ${body.data?.value ?? ''} (answer with a guardrail message to session ${view.sessionId})`;
  if (view.status === 'failed') return `Task failed (${view.code}): ${body.error}`;
  return `Task ${view.status}`;
}

/** The task's envelope (as polling sees it) as a tool result, or TASK_NOT_FOUND. */
export function taskResult(config: Config, view: TaskView | null): CallToolResult {
  if (!view) throw new ServiceError('TASK_NOT_FOUND', 'Task not found');
  const env = taskEnvelope(fileLinks(config), view, { withCompletedAt: true });
  return result(env.body, envelopeLine(view, env.body as { data?: { message?: string; value?: string }; error?: string }));
}

/** Sends the agent's steps as progress notifications every PROGRESS_POLL_MS; the timer, or none without a progress token. */
function reportProgress(caller: McpCaller, sessionId: string, extra: ToolExtra): NodeJS.Timeout | undefined {
  const token = extra._meta?.progressToken;
  if (token === undefined) return undefined;
  let seq = 0;
  let steps = 0;
  const sendNewSteps = async () => {
    for (const e of await caller.deps.store.events.after(sessionId, seq)) {
      seq = e.seq;
      if (e.event !== 'message' || e.payload.type !== 'action') continue;
      steps += 1;
      const target = e.payload.data.target ? ` ${e.payload.data.target}` : '';
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: steps, message: `${e.payload.data.name}${target}` } });
    }
  };
  return setInterval(() => {
    sendNewSteps().catch((err) => caller.logger.debug({ err }, 'progress notification failed'));
  }, PROGRESS_POLL_MS);
}

/** Waits for the task to end or ask for a human, sending the agent's steps as progress notifications. */
export async function settle(caller: McpCaller, sessionId: string, taskId: string, extra: ToolExtra): Promise<TaskView | null> {
  const { sessions } = caller.deps;
  const timer = reportProgress(caller, sessionId, extra);
  try {
    const view = await sessions.outcome(sessionId, taskId, { deadline: Date.now() + 360_000, stopped: () => extra.signal.aborted });
    return view ?? sessions.task(sessionId, taskId);
  } finally {
    if (timer) clearInterval(timer);
  }
}
