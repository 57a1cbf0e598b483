import type { Page } from 'playwright-core';
import type { BrowserPool, BrowserSession } from '../browser/pool';
import { TaskFailure, isServiceError } from '../errors';
import type { SessionMessage } from '../events/types';
import type { Logger } from '../logger';
import type { StepInput, StepResult } from '../workflows/types';
import { computeCost } from './llm/pricing';
import { checkStructuredOutput } from './structured-output';
import type { LlmClient, LlmMessage, LlmToolCall, LlmToolSpec } from './llm/types';
import { observePage } from './observe/observe';
import { systemPrompt, taskPrompt } from './prompts';
import { agentTools, toolSpecs } from './tools';
import type { AgentTool, FileProvider, TaskFiles, ToolContext } from './types';

/** Failures that end the task at once; any other failed action is reported to the model. */
const FATAL_CODES = new Set(['NAVIGATION_TIMEOUT', 'PAGE_CRASH', 'INVALID_STRUCTURED_OUTPUT']);
const MAX_BAD_REPLIES = 3;
const MAX_CONSECUTIVE_FAILED_ACTIONS = 3;
const MAX_OUTPUT_PER_CALL = 4096;
const KEEP_MESSAGES = 40;
/** A structured result that does not validate is sent back this many times, then the task fails. */
const MAX_OUTPUT_CORRECTIONS = 2;

interface Memory {
  /** The task the conversation is on; another worker restoring the session starts without one. */
  taskId?: string;
  files?: TaskFiles;
  messages: LlmMessage[];
  failedActions: number;
  lastFailureCode?: string;
  outputCorrections?: number;
  /** The tools as the model sees them for this task (done carries the output format). */
  specs?: LlmToolSpec[];
}

export interface AgentRunnerOptions {
  llm: LlmClient;
  prices: Record<string, { input: number; output: number }>;
  observationTokenBudget: number;
  navigationTimeoutMs: number;
  vision: boolean;
  /** Task files for upload_file; without it the agent has none. */
  files?: FileProvider;
  /** Live events of the agent (its reasoning, its actions). */
  onEvent?: (sessionId: string, message: SessionMessage) => void;
}

/**
 * Runs one agent step at a time: observe the page, ask the model for one action, do it.
 * The conversation lives here, beside the browser; the workflow only sees summaries.
 */
export class AgentRunner {
  private readonly memory = new Map<string, Memory>();
  private readonly tools = new Map<string, AgentTool>(agentTools.map((t) => [t.name, t as AgentTool]));

  constructor(
    private readonly pool: BrowserPool,
    private readonly opts: AgentRunnerOptions,
  ) {}

  forget(sessionId: string): void {
    this.memory.delete(sessionId);
  }

  async step(input: StepInput, signal: AbortSignal, log: Logger): Promise<StepResult & { cost: number }> {
    const session = this.pool.get(input.sessionId);
    if (!session) throw new TaskFailure('INSTANCE_LOST', 'The browser of this session is no longer available');
    if (session.crashed) throw new TaskFailure('PAGE_CRASH', 'The browser page crashed');
    const mem = this.memoryOf(input.sessionId);
    session.artifacts.taskId = input.taskId;

    // Once per task and worker: a step that runs again (after a pause or a takeover) must
    // not reload the starting page over what the human did.
    if (mem.taskId !== input.taskId) {
      mem.taskId = input.taskId;
      mem.failedActions = 0;
      mem.outputCorrections = 0;
      mem.specs = toolSpecs(input.params);
      mem.files = this.opts.files
        ? await this.opts.files.forTask({ userId: input.userId, sessionId: input.sessionId, fileIds: input.params.files, environmentId: input.environmentId })
        : undefined;
      mem.messages.push({ role: 'user', content: taskPrompt(input.params, input.previousTasks, mem.files?.available() ?? []) });
      if (input.stepNo === 0 && input.params.startingUrl) {
        const nav = this.tools.get('navigate')!;
        await nav.execute(this.toolContext(session, signal, mem), { url: input.params.startingUrl });
      }
    }
    if (input.humanReply !== undefined) {
      mem.messages.push({ role: 'user', content: `The human answered your request: ${input.humanReply}` });
    }

    const t0 = performance.now();
    const observation = await observePage(session.page, { tokenBudget: this.opts.observationTokenBudget, screenshot: this.opts.vision });
    compactObservations(mem.messages);
    mem.messages.push({ role: 'user', content: `Observation (step ${input.stepNo + 1}):\n${observation.text}`, image: observation.screenshot });

    const t1 = performance.now();
    let modelMs = 0;
    const usage = { inputTokens: 0, outputTokens: 0 };
    let call: LlmToolCall | undefined;
    let tool: AgentTool | undefined;
    let args: unknown;
    for (let attempt = 0; !tool; attempt++) {
      if (attempt >= MAX_BAD_REPLIES) {
        throw new TaskFailure('LLM_INVALID_RESPONSE', `The model did not produce a valid action after ${MAX_BAD_REPLIES} attempts`);
      }
      const estimate = estimateTokens(mem.messages) + 1500; // tool schemas and system prompt
      if (estimate > input.remaining.inputTokens - usage.inputTokens) {
        throw new TaskFailure('TOKEN_BUDGET_EXCEEDED', 'The next model call would exceed maxInputTokens', {
          remainingInputTokens: input.remaining.inputTokens - usage.inputTokens,
          estimatedInputTokens: estimate,
        });
      }
      const maxTokens = Math.min(MAX_OUTPUT_PER_CALL, input.remaining.outputTokens - usage.outputTokens);
      if (maxTokens < 16) throw new TaskFailure('TOKEN_BUDGET_EXCEEDED', 'maxOutputTokens is used up', { remainingOutputTokens: maxTokens });

      const callStart = performance.now();
      const reply = await this.opts.llm.complete({ system: systemPrompt(), messages: mem.messages, tools: (mem.specs ??= toolSpecs(input.params)), maxTokens, signal });
      modelMs += performance.now() - callStart;
      usage.inputTokens += reply.usage.inputTokens;
      usage.outputTokens += reply.usage.outputTokens;
      mem.messages.push({ role: 'assistant', content: reply.text, toolCalls: reply.toolCalls.length ? reply.toolCalls : undefined });
      if (reply.text.trim()) this.opts.onEvent?.(input.sessionId, { type: 'agent', taskId: input.taskId, content: reply.text.trim() });

      if (!reply.toolCalls.length) {
        mem.messages.push({ role: 'user', content: 'You must answer with exactly one tool call. Call done when the task is complete.' });
        continue;
      }
      [call] = reply.toolCalls;
      for (const extra of reply.toolCalls.slice(1)) {
        mem.messages.push({ role: 'tool', toolCallId: extra.id, content: 'Not performed: only one action is taken per step.' });
      }
      const candidate = this.tools.get(call!.name);
      const parsed = candidate ? parseArgs(candidate, call!.arguments) : { ok: false as const, error: `Unknown tool "${call!.name}".` };
      if (!parsed.ok) {
        mem.messages.push({ role: 'tool', toolCallId: call!.id, content: `Invalid call: ${parsed.error} Call a tool again with valid arguments.` });
        log.warn({ tool: call!.name, attempt }, 'model gave invalid tool arguments');
        continue;
      }
      tool = candidate;
      args = parsed.value;
    }

    const cost = computeCost(usage, this.opts.llm.model, this.opts.prices);
    const t2 = performance.now();
    const timings = () => ({ observeMs: round(t1 - t0), modelMs: round(modelMs), actMs: round(performance.now() - t2) });
    const base: Omit<StepResult, 'kind'> & { cost: number; action: { name: string; target?: string } } = { usage, cost, action: { name: tool.name } };
    try {
      const result = await tool.execute(this.toolContext(session, signal, mem), args as never);
      base.timings = timings();
      if (result.done && result.done.success !== false) {
        const checked = await checkStructuredOutput(input.params, result.done.message);
        if (!checked.ok) {
          mem.outputCorrections = (mem.outputCorrections ?? 0) + 1;
          if (mem.outputCorrections > MAX_OUTPUT_CORRECTIONS) {
            throw new TaskFailure('INVALID_STRUCTURED_OUTPUT', `The result did not match the requested format after ${MAX_OUTPUT_CORRECTIONS} corrections: ${checked.error}`);
          }
          mem.messages.push({ role: 'tool', toolCallId: call!.id, content: `Not accepted: ${checked.error} Call done again with a corrected answer.` });
          log.info({ error: checked.error, corrections: mem.outputCorrections }, 'structured output refused');
          return { ...base, kind: 'continue' };
        }
        result.done.message = checked.value;
      }
      mem.failedActions = 0;
      mem.messages.push({ role: 'tool', toolCallId: call!.id, content: result.summary });
      base.action.target = result.target;
      this.opts.onEvent?.(input.sessionId, { type: 'action', taskId: input.taskId, data: { name: tool.name, target: result.target } });
      log.info({ action: tool.name, target: result.target }, 'agent action');
      if (result.done) return { ...base, kind: 'done', message: result.done.message, success: result.done.success };
      if (result.humanInput) return { ...base, kind: 'human_input', humanInput: result.humanInput };
      return { ...base, kind: 'continue' };
    } catch (err) {
      if (signal.aborted) throw err;
      if (session.crashed) throw new TaskFailure('PAGE_CRASH', 'The browser page crashed');
      if (isServiceError(err) && FATAL_CODES.has(err.code)) throw err;
      const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
      base.timings = timings();
      mem.failedActions += 1;
      mem.lastFailureCode = isServiceError(err) ? err.code : 'ACTION_FAILED';
      mem.messages.push({ role: 'tool', toolCallId: call!.id, content: `Action failed: ${reason}` });
      log.info({ action: tool.name, reason, failures: mem.failedActions }, 'agent action failed');
      if (mem.failedActions >= MAX_CONSECUTIVE_FAILED_ACTIONS) {
        throw new TaskFailure(mem.lastFailureCode, `Action ${tool.name} failed ${mem.failedActions} times in a row: ${reason}`);
      }
      return { ...base, kind: 'continue' };
    }
  }

  private memoryOf(sessionId: string): Memory {
    let mem = this.memory.get(sessionId);
    if (!mem) {
      mem = { messages: [], failedActions: 0 };
      this.memory.set(sessionId, mem);
    }
    if (mem.messages.length > KEEP_MESSAGES) trimHistory(mem.messages);
    return mem;
  }

  private toolContext(session: BrowserSession, signal: AbortSignal, mem: Memory): ToolContext {
    return {
      files: mem.files,
      get page(): Page {
        return session.page;
      },
      context: session.context,
      setActivePage: (p) => (session.page = p),
      navigationTimeoutMs: this.opts.navigationTimeoutMs,
      signal,
    };
  }
}

function parseArgs(tool: AgentTool, raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return { ok: false, error: `Arguments of ${tool.name} are not valid JSON.` };
  }
  const res = tool.schema.safeParse(json);
  if (!res.success) return { ok: false, error: `Arguments of ${tool.name} do not match its schema: ${res.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}.` };
  return { ok: true, value: res.data };
}

/** Older observations are replaced by a marker: only the latest page state matters. */
function compactObservations(messages: LlmMessage[]): void {
  for (const m of messages) {
    if (m.role === 'user' && m.content.startsWith('Observation (step ') && !m.content.endsWith('[omitted]')) {
      m.content = `${m.content.split('\n')[0]} [omitted]`;
      delete m.image;
    }
  }
}

/** Keeps the task prompts and the recent turns, cutting at a user message so tool calls stay paired. */
function trimHistory(messages: LlmMessage[]): void {
  const cutFrom = messages.length - KEEP_MESSAGES / 2;
  let i = cutFrom;
  while (i < messages.length && messages[i].role !== 'user') i++;
  const prompts = messages.slice(0, i).filter((m) => m.role === 'user' && m.content.includes('New task:'));
  messages.splice(0, messages.length, ...prompts.slice(-3), ...messages.slice(i));
}

const round = (ms: number) => Math.round(ms * 10) / 10;

function estimateTokens(messages: LlmMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += m.content.length;
    if (m.role === 'assistant' && m.toolCalls) for (const c of m.toolCalls) chars += c.arguments.length + c.name.length;
    if (m.role === 'user' && m.image) chars += 4000;
  }
  return Math.ceil(chars / 4);
}
