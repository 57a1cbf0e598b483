import type { Response } from 'express';
import type { Config } from '../../config';
import { isServiceError } from '../../contracts/errors';
import type { Logger } from '../../logger';
import type { Store } from '../../store/store';
import { LIVE_SESSION_STATUSES } from '../../store/sessions.repository';
import type { UserRecord } from '../../store/users.repository';
import { TERMINAL_TASK_STATUSES, type TaskView } from '../../contracts/session-types';
import { CHAT_MODEL_ID, DEFAULT_MAX_TOKENS, MAX_COST_TEXT, type ChatCompletion, type ChatCompletionChunk, type ChatCompletionRequest } from '../../contracts/schemas/chat.schema';
import { MAX_COST_USD, maxCostSchema, taskParamsSchema } from '../../contracts/schemas/task.schema';
import { parseRequest } from '../../contracts/schemas/validation';
import type { SessionsService } from '../../sessions/sessions.service';
import { TASK_PLACES } from '../../sessions/task-checks';
import { contentDeltas, progressComment, taskPrompt } from './chat-prompt';
import { guardrailTriggered, OpenAiCompatError, toOpenAiError } from './openai-errors';

const PROGRESS_POLL_MS = 250;
const KEEPALIVE_MS = 15_000;

interface Run {
  user: UserRecord;
  sessionId: string;
  taskId: string;
  created: number;
  deadline: number;
  /** Set when the client went away before its answer. */
  aborted: boolean;
}

/** What the endpoint works with: the store, the sessions service, its logger. */
interface ChatDeps {
  store: Store;
  sessions: SessionsService;
  logger: Logger;
}

/** The request's task parameters: the prompt, the token bound, the cost bound; a conversation too long for one task is context_length_exceeded. */
function taskParamsOf(body: ChatCompletionRequest, prompt: string | null) {
  try {
    const maxCost = maxCostOf(body.metadata?.max_cost);
    return parseRequest(taskParamsSchema, { prompt: prompt ?? '', maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS, terminateOnCompletion: true, ...(maxCost !== undefined ? { maxCost } : {}) });
  } catch (err) {
    if (isServiceError(err) && err.details?.parameter === 'prompt') throw new OpenAiCompatError(400, 'The conversation is too long for one task (at most 50000 characters)', 'invalid_request_error', 'context_length_exceeded');
    throw err;
  }
}

/** Starts the request's session with its one task. */
async function begin(deps: ChatDeps, user: UserRecord, body: ChatCompletionRequest): Promise<Run> {
  const prompt = taskPrompt(body.messages);
  // No user message at all: the task is missing. A blank one is an empty task, which the task's checks refuse.
  if (prompt === null && !body.messages.some((m) => m.role === 'user')) {
    throw new OpenAiCompatError(400, 'messages must contain a user message with text (the task)', 'invalid_request_error', 'missing_required_field');
  }
  const params = taskParamsOf(body, prompt);
  const started = await deps.sessions.start(user, params, { singleTask: true }, TASK_PLACES.chat);
  const now = Date.now();
  // The workflow ends the task at maxDuration; the margin covers recording its outcome.
  return { user, sessionId: started.sessionId, taskId: started.taskId!, created: Math.floor(now / 1000), deadline: now + params.maxDuration + 60_000, aborted: false };
}

/** Waits until the task ends or asks for a human; null when the client left or the deadline passed. */
const outcome = (deps: ChatDeps, run: Run): Promise<TaskView | null> => deps.sessions.outcome(run.sessionId, run.taskId, { deadline: run.deadline, stopped: () => run.aborted });

/**
 * Ends the request's session unless the task ended and so ends it itself
 * (its one task ended: end_session reason `completed`).
 */
async function release(deps: ChatDeps, run: Run, view?: TaskView | null): Promise<void> {
  if (view && TERMINAL_TASK_STATUSES.includes(view.status) && !run.aborted) return;
  try {
    const rec = await deps.store.sessions.get(run.sessionId);
    if (rec && LIVE_SESSION_STATUSES.includes(rec.status)) await deps.sessions.changeState(run.user, run.sessionId, 'terminate');
  } catch (err) {
    if (!(isServiceError(err) && err.code === 'SESSION_NOT_FOUND')) deps.logger.warn({ err, sessionId: run.sessionId }, 'could not terminate the session of a chat completion');
  }
}

const service = (run: Run, view: TaskView) => ({ sessionId: run.sessionId, taskId: run.taskId, cost: view.usage.cost });
const usage = (view: TaskView) => ({ prompt_tokens: view.usage.prompt_tokens, completion_tokens: view.usage.completion_tokens, total_tokens: view.usage.total_tokens });

/** The task's end as an error of the endpoint; null when it produced an answer. */
function failure(view: TaskView | null): OpenAiCompatError | null {
  if (!view) return new OpenAiCompatError(504, 'The task did not finish in time', 'server_error', 'task_timeout');
  if (view.status === 'guardrail_trigger') return guardrailTriggered(view.guardrail?.value ?? '');
  if (view.status === 'failed') return new OpenAiCompatError(422, view.error ?? 'The task failed', 'task_error', (view.code ?? 'TASK_FAILED').toLowerCase());
  return null;
}

/** Stops the task and frees the session as soon as the client goes away. */
function watchDisconnect(deps: ChatDeps, run: Run, res: Response): void {
  const left = () => {
    if (run.aborted) return;
    run.aborted = true;
    deps.logger.info({ sessionId: run.sessionId, taskId: run.taskId }, 'client left; terminating the session');
    void release(deps, run);
  };
  // Gone while its session was being started: no close event comes any more.
  if (res.destroyed || res.socket?.destroyed) return left();
  res.on('close', () => {
    if (!res.writableFinished) left();
  });
}

/** The answer as one JSON body (`stream: false`). */
async function answer(deps: ChatDeps, run: Run, res: Response): Promise<void> {
  watchDisconnect(deps, run, res);
  let view: TaskView | null = null;
  try {
    view = await outcome(deps, run);
    if (run.aborted) return;
    const err = failure(view);
    if (err) {
      res.status(err.status).json(err.toBody());
      return;
    }
    const body: ChatCompletion = {
      id: `chatcmpl-${run.taskId}`,
      object: 'chat.completion',
      created: run.created,
      model: CHAT_MODEL_ID,
      choices: [{ index: 0, message: { role: 'assistant', content: view!.message ?? '', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: usage(view!),
      service: service(run, view!),
    };
    res.json(body);
  } finally {
    await release(deps, run, view);
  }
}

/** The SSE stream of one run: its chunks, and lines that go out only while the client is there. */
interface ChunkStream {
  chunk: (c: Omit<ChatCompletionChunk, 'id' | 'object' | 'created' | 'model'>) => string;
  write: (s: string) => void;
}

/** Sends the stream's headers and its first chunk (the assistant's role). */
function openStream(run: Run, res: Response): ChunkStream {
  const chunk: ChunkStream['chunk'] = (c) => `data: ${JSON.stringify({ id: `chatcmpl-${run.taskId}`, object: 'chat.completion.chunk', created: run.created, model: CHAT_MODEL_ID, ...c })}\n\n`;
  const write = (s: string) => {
    if (!run.aborted && !res.writableEnded) res.write(s);
  };
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-session-id': run.sessionId,
    'x-task-id': run.taskId,
  });
  write(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], service: { sessionId: run.sessionId, taskId: run.taskId } }));
  return { chunk, write };
}

/** The agent's progress, read from the session's timeline: each call sends what came since the last, one call at a time. */
function progressReader(deps: ChatDeps, run: Run, out: ChunkStream): () => Promise<void> {
  let seq = 0;
  let polling: Promise<void> = Promise.resolve();
  return () =>
    (polling = polling.then(async () => {
      try {
        for (const e of await deps.store.events.after(run.sessionId, seq)) {
          seq = e.seq;
          const line = progressComment(e);
          if (line) out.write(line);
        }
      } catch (err) {
        deps.logger.warn({ err, sessionId: run.sessionId }, 'reading progress failed');
      }
    }));
}

/** The task's end on the stream: its error as a data line, or its answer in pieces, the stop chunk, the usage if asked and [DONE]. */
function writeEnd(out: ChunkStream, run: Run, view: TaskView | null, opts: { includeUsage: boolean }): void {
  const err = failure(view);
  if (err) {
    // Headers are sent: the error goes as a data line, which the SDKs raise as an APIError.
    out.write(`data: ${JSON.stringify(err.toBody())}\n\n`);
    return;
  }
  for (const piece of contentDeltas(view!.message ?? '')) out.write(out.chunk({ choices: [{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }] }));
  out.write(out.chunk({ choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], service: service(run, view!) }));
  if (opts.includeUsage) out.write(out.chunk({ choices: [], usage: usage(view!) }));
  out.write('data: [DONE]\n\n');
}

/** The answer as server-sent events (`stream: true`), the agent's progress as SSE comments meanwhile. */
async function stream(deps: ChatDeps, run: Run, res: Response, opts: { includeUsage: boolean }): Promise<void> {
  watchDisconnect(deps, run, res);
  const out = openStream(run, res);
  const pollProgress = progressReader(deps, run, out);
  const ticker = setInterval(() => void pollProgress(), PROGRESS_POLL_MS);
  const keepalive = setInterval(() => out.write(': keep-alive\n\n'), KEEPALIVE_MS);
  let view: TaskView | null = null;
  try {
    view = await outcome(deps, run);
    clearInterval(ticker);
    await pollProgress();
    if (run.aborted) return;
    writeEnd(out, run, view, opts);
  } catch (e) {
    const err = toOpenAiError(e);
    if (err.status >= 500) deps.logger.error({ err: e, sessionId: run.sessionId }, 'chat completion stream failed');
    out.write(`data: ${JSON.stringify(err.toBody())}\n\n`);
  } finally {
    clearInterval(ticker);
    clearInterval(keepalive);
    if (!res.writableEnded) res.end();
    await release(deps, run, view);
  }
}

/**
 * `POST /v1/chat/completions` on the task path: one session per request (run-task with
 * terminateOnCompletion), waited for through the session workflow's awaitTask update, and
 * terminated whatever the outcome or when the client disconnects.
 */
export function createChatCompletions(deps: { config: Config; store: Store; sessions: SessionsService; logger: Logger }) {
  const chat: ChatDeps = { store: deps.store, sessions: deps.sessions, logger: deps.logger.child({ component: 'chat-completions' }) };
  return {
    begin: (user: UserRecord, body: ChatCompletionRequest): Promise<Run> => begin(chat, user, body),
    answer: (run: Run, res: Response): Promise<void> => answer(chat, run, res),
    stream: (run: Run, res: Response, opts: { includeUsage: boolean }): Promise<void> => stream(chat, run, res, opts),
  };
}

export type ChatCompletions = ReturnType<typeof createChatCompletions>;

/** `metadata.max_cost` as the task's maxCost (USD): a number, or a string of one; anything else is a 400. */
export function maxCostOf(raw: number | string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const usd = typeof raw === 'number' ? raw : MAX_COST_TEXT.test(raw) ? Number(raw) : NaN;
  if (!maxCostSchema.safeParse(usd).success) {
    throw new OpenAiCompatError(400, `metadata.max_cost must be a number of USD above 0 and at most ${MAX_COST_USD}`, 'invalid_request_error', 'invalid_parameter');
  }
  return usd;
}
