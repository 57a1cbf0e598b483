import type { Page } from 'playwright-core';
import { z } from 'zod';
import { abortable } from './tools/abort';
import type { BrowserPool, BrowserSession } from '../browser/pool';
import { TaskFailure, isServiceError, type ErrorCode } from '../contracts/errors';
import type { SessionMessage } from '../contracts/events';
import type { Logger } from '../logger';
import type { StepInput, StepResult } from '../contracts/session-types';
import { approves, gateAction } from './action-gate';
import { computeCost } from './llm/pricing';
import { checkStructuredOutput } from './structured-output';
import type { LlmClient, LlmMessage, LlmToolCall, LlmToolSpec } from './llm/types';
import { observePage } from './observe/observe';
import { guardNavigations, reportRefusals, type NavigationGuardState } from './policy/navigation-guard';
import { CompiledPolicy } from './policy/policy';
import type { PolicyDocument } from '../contracts/policy-rules';
import type { SecretVault } from './secrets/vault';
import type { TaskSecrets } from './secrets/secrets';
import { systemPrompt, taskPrompt } from './prompts';
import { agentTools, toolSpecs } from './tools';
import type { AgentTool, FileProvider, TaskFiles, ToolContext } from './types';
import type { Recorder } from '../recording/recorder';
import { findAgain, replayPlan, samePage, stepLine, type FoundElement, type ReplayPlan } from '../recording/replay';
import type { RecordedStep } from '../contracts/recording';
import { doneSpec } from './tools/done';
import { fitHistory, observationBudget, tokensOf } from './context-budget';
import { RepetitionGuard, repetitionNote } from './repetition';
import { boundToPage, observedIndexes } from './page-bound-tools';
import { approvalMoved, elementUnderIndex, type ApprovedElement } from './approval-binding';

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
  lastFailureCode?: ErrorCode;
  outputCorrections?: number;
  /** The tools as the model sees them for this task (done carries the output format). */
  specs?: LlmToolSpec[];
  /** The session's automation policy, read once per task. */
  policy?: CompiledPolicy | null;
  /** An action waiting for the human's approval (its tool call is answered once they do). */
  pendingApproval?: { callId: string; tool: string; args: unknown; element?: ApprovedElement };
  /** The domain rules' guard on the session's browser context, when the policy restricts domains. */
  guard?: NavigationGuardState;
  /** A replayed task: its plan, how far it got, and whether the agent has taken over. */
  replay?: { plan: ReplayPlan; cursor: number; off: boolean; done: string[] };
  /** The next model call may only finish the task (the answer of a replayed task). */
  answerOnly?: boolean;
  /** The same action chosen again on an unchanged page, counted. */
  repetition: RepetitionGuard;
  /** The latest observation's text (what an index refers to). */
  lastObservation?: string;
}

/** A recorded step that cannot be performed again as recorded: the agent takes over. */
class ReplayMismatch extends Error {}

/** Where automation policies come from (the store); a session's policy is read once per task. */
export interface PolicyProvider {
  get(policyId: string, userId: string): Promise<PolicyDocument | null>;
}

/** What one step works with, handed to the parts of the step. */
interface StepContext {
  input: StepInput;
  session: BrowserSession;
  mem: Memory;
  signal: AbortSignal;
  log: Logger;
  /** The model tokens the step has used so far (read by the caller when the step is cancelled). */
  spent: StepResult['usage'];
  secrets?: TaskSecrets;
  /** Puts placeholders back where secret values show up in outgoing text. */
  mask: (text: string) => string;
}

export interface AgentRunnerOptions {
  llm: LlmClient;
  prices: Record<string, { input: number; output: number }>;
  observationTokenBudget: number;
  /** The prompt's budget in tokens: system, tools, history and observation (see context-budget.ts). */
  contextTokens: number;
  navigationTimeoutMs: number;
  vision: boolean;
  /** Task files for upload_file; without it the agent has none. */
  files?: FileProvider;
  /** Live events of the agent (its reasoning, its actions). */
  onEvent?: (sessionId: string, message: SessionMessage) => void;
  /** Automation policies; a session naming one never runs without it. */
  policies?: PolicyProvider;
  /** Secret values of the worker's sessions (memory only). */
  vault?: SecretVault;
  /** Writes what the agent does into the task's recording. */
  recorder?: Recorder;
  /** Reads the recording a replayed task performs. */
  recordings?: { list(taskId: string, userId: string): Promise<RecordedStep[]> };
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
    this.opts.vault?.forget(sessionId);
  }

  /**
   * One step. `spent` adds up the model tokens of the step as they are used, so a step
   * cancelled halfway (pause, stop, takeover, timeout) still has its tokens counted.
   */
  async step(input: StepInput, signal: AbortSignal, log: Logger, spent: StepResult['usage'] = { inputTokens: 0, outputTokens: 0 }): Promise<StepResult & { cost: number }> {
    const session = this.pool.get(input.sessionId);
    if (!session) throw new TaskFailure('INSTANCE_LOST', 'The browser of this session is no longer available');
    if (session.crashed) throw new TaskFailure('PAGE_CRASH', 'The browser page crashed');
    const mem = this.memoryOf(input.sessionId);
    session.artifacts.taskId = input.taskId;
    const vault = this.opts.vault;
    const c: StepContext = { input, session, mem, signal, log, spent, secrets: this.secretsOf(input), mask: (text) => (vault ? vault.mask(input.sessionId, text) : text) };
    if (mem.guard) mem.guard.acting = true;
    try {
      return await this.runStep(c);
    } finally {
      if (mem.guard) mem.guard.acting = false;
    }
  }

  /** What model tokens cost at the configured prices (USD). */
  costOf(usage: StepResult['usage']): number {
    return computeCost(usage, this.opts.llm.model, this.opts.prices);
  }

  /** The task's secrets, held from the hand-over; a worker that should hold them but does not asks for them again. */
  private secretsOf(input: StepInput): TaskSecrets | undefined {
    const vault = this.opts.vault;
    if (input.secrets?.length && vault) vault.hold(input.sessionId, input.taskId, input.secrets);
    if (!input.hasSecrets) return undefined;
    const held = vault?.forTask(input.sessionId, input.taskId);
    if (!held) throw new TaskFailure('SECRETS_UNAVAILABLE', 'This worker does not hold the secrets of the task');
    return held;
  }

  /** The session's policy; a policy that went missing stops the task rather than run it unprotected. */
  private async policyOf(input: StepInput): Promise<CompiledPolicy | null> {
    if (!input.policyId) return null;
    const doc = await this.opts.policies?.get(input.policyId, input.userId);
    if (!doc) throw new TaskFailure('POLICY_NOT_FOUND', `The automation policy ${input.policyId} of this session no longer exists; the task does not run without it`, { policyId: input.policyId });
    return new CompiledPolicy(doc);
  }

  private async runStep(c: StepContext): Promise<StepResult & { cost: number }> {
    const { input, session, mem, signal, log, mask } = c;
    // Once per task and worker: a step that runs again (after a pause or a takeover) must
    // not reload the starting page over what the human did.
    if (mem.taskId !== input.taskId) {
      this.answerPendingApproval(mem, 'Not performed: the task ended before the human answered.');
      mem.taskId = input.taskId;
      mem.failedActions = 0;
      mem.outputCorrections = 0;
      mem.repetition.reset();
      mem.specs = toolSpecs(input.params);
      mem.policy = await this.policyOf(input);
      if (mem.policy?.restrictsDomains && !mem.guard) mem.guard = await guardNavigations(session.context);
      if (mem.guard) {
        mem.guard.policy = mem.policy;
        mem.guard.acting = true;
      }
      mem.files = this.opts.files
        ? await this.opts.files.forTask({ userId: input.userId, sessionId: input.sessionId, fileIds: input.params.files, environmentId: input.environmentId })
        : undefined;
      mem.messages.push({ role: 'user', content: taskPrompt(input.params, input.previousTasks, mem.files?.available() ?? [], c.secrets?.catalogue() ?? []) });
      mem.replay = undefined;
      mem.answerOnly = false;
      const p = input.params;
      await this.opts.recorder?.begin(
        { userId: input.userId, sessionId: input.sessionId, taskId: input.taskId },
        { prompt: mask(p.prompt), startingUrl: p.startingUrl ? mask(p.startingUrl) : null, outputType: p.outputType, ...(p.outputSchema !== undefined ? { outputSchema: p.outputSchema } : {}) },
      );
      if (input.params.replay && this.opts.recordings) {
        const plan = replayPlan(await this.opts.recordings.list(input.params.replay.source, input.userId), input.params);
        mem.replay = { plan, cursor: 0, off: false, done: [] };
        log.info({ replayOf: input.params.replay.of, source: input.params.replay.source, steps: plan.steps.length }, 'task replays a recording');
      }
      if (input.stepNo === 0 && input.params.startingUrl) {
        const allowed = mem.policy?.checkUrl(input.params.startingUrl);
        if (allowed?.effect === 'block') {
          throw new TaskFailure('POLICY_BLOCKED', `The startingUrl ${input.params.startingUrl} is not allowed: ${allowed.reason}`, { url: input.params.startingUrl, policyId: mem.policy!.id });
        }
        const nav = this.tools.get('navigate')!;
        await nav.execute(this.toolContext(session, signal, mem), { url: input.params.startingUrl });
      }
    }
    if (input.humanReply !== undefined) {
      const pending = mem.pendingApproval;
      if (pending) {
        mem.pendingApproval = undefined;
        return this.settleApproval(c, pending, input.humanReply);
      }
      mem.messages.push({ role: 'user', content: `The human answered your request: ${input.humanReply}` });
    }
    if (mem.replay && !mem.replay.off) {
      const replayed = await this.replayNext(c);
      if (replayed) return replayed;
    }

    const t0 = performance.now();
    const system = systemPrompt(mem.policy ? mem.policy.llmRole : undefined);
    // The system prompt and the tools: the same for every call of this step.
    const fixedTokens = tokensOf(system) + tokensOf(JSON.stringify(mem.answerOnly ? [doneSpec(input.params)] : (mem.specs ??= toolSpecs(input.params))));
    const prompt = [...mem.messages].reverse().find((m) => m.role === 'user' && m.content.includes('New task:'));
    const tokenBudget = observationBudget(this.opts.contextTokens, fixedTokens + (prompt ? tokensOf(prompt.content) : 0), this.opts.observationTokenBudget);
    const observation = await observePage(session.page, { tokenBudget, screenshot: this.opts.vision });
    compactObservations(mem.messages);
    mem.lastObservation = observation.text;
    mem.messages.push({ role: 'user', content: mask(`Observation (step ${input.stepNo + 1}):\n${observation.text}`), image: observation.screenshot });
    fitHistory(mem.messages, this.opts.contextTokens, fixedTokens);

    const t1 = performance.now();
    let modelMs = 0;
    const usage = c.spent;
    let call: LlmToolCall | undefined;
    let tool: AgentTool | undefined;
    let args: unknown;
    let reasoning: string | undefined;
    for (let attempt = 0; !tool; attempt++) {
      if (attempt >= MAX_BAD_REPLIES) {
        throw new TaskFailure('LLM_INVALID_RESPONSE', `The model did not produce a valid action after ${MAX_BAD_REPLIES} attempts`);
      }
      const estimate = estimateTokens(mem.messages) + fixedTokens;
      if (estimate > input.remaining.inputTokens - usage.inputTokens) {
        throw new TaskFailure('TOKEN_BUDGET_EXCEEDED', 'The next model call would exceed maxInputTokens', {
          remainingInputTokens: input.remaining.inputTokens - usage.inputTokens,
          estimatedInputTokens: estimate,
        });
      }
      const maxTokens = Math.min(MAX_OUTPUT_PER_CALL, input.remaining.outputTokens - usage.outputTokens);
      if (maxTokens < 16) throw new TaskFailure('TOKEN_BUDGET_EXCEEDED', 'maxOutputTokens is used up', { remainingOutputTokens: maxTokens });

      const callStart = performance.now();
      let reply: Awaited<ReturnType<LlmClient['complete']>>;
      try {
        const offered = mem.answerOnly ? [doneSpec(input.params)] : (mem.specs ??= toolSpecs(input.params));
        // A model whose answers follow the schemas is not offered the tool it keeps repeating on this unchanged page.
        const tools = this.opts.llm.followsSchemas ? withoutTool(boundToPage(offered, observation.text), mem.repetition.repeating(observation.text)) : offered;
        reply = await this.opts.llm.complete({ system, messages: mem.messages, tools, maxTokens, signal });
      } catch (err) {
        // A call cut off by the cancellation was sent all the same: its prompt counts at the estimate.
        if (signal.aborted) usage.inputTokens += estimate;
        throw err;
      }
      modelMs += performance.now() - callStart;
      usage.inputTokens += reply.usage.inputTokens;
      usage.outputTokens += reply.usage.outputTokens;
      mem.messages.push({ role: 'assistant', content: reply.text, toolCalls: reply.toolCalls.length ? reply.toolCalls : undefined });
      if (reply.text.trim()) this.opts.onEvent?.(input.sessionId, { type: 'agent', taskId: input.taskId, content: mask(reply.text.trim()) });

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
      reasoning = reply.text.trim() || undefined;
    }
    mem.answerOnly = false;

    const cost = computeCost(usage, this.opts.llm.model, this.opts.prices);
    const repeated = mem.repetition.note(tool.name, args, observation.text);
    if (repeated.kind === 'stop') {
      // The call is answered, so a later task of the session sends a well-formed conversation.
      mem.messages.push({ role: 'tool', toolCallId: call!.id, content: 'Not performed: the task ended, as this action was repeated on a page that did not change.' });
      throw new TaskFailure('TASK_LOOP_DETECTED', `The agent chose ${tool.name} with the same arguments ${repeated.count} times in a row on a page that did not change`, { action: tool.name, repeats: repeated.count });
    }
    const result = await this.act(c, { tool, args, callId: call!.id, usage, cost, observeMs: t1 - t0, modelMs, reasoning });
    if (repeated.kind === 'warn') {
      mem.messages.push({ role: 'user', content: repetitionNote(tool.name, repeated.count) });
      log.info({ action: tool.name, repeats: repeated.count }, 'agent repeats an action on an unchanged page');
    }
    return result;
  }

  /**
   * A replayed task's next step, performed from its recording without the model: the page
   * checked (the recorded address), the element found again by its description. Undefined
   * when the replay cannot go on: the agent is told why and what remains, and this step
   * goes on with the model.
   */
  private async replayNext(c: StepContext): Promise<(StepResult & { cost: number }) | undefined> {
    const { session, mem, log } = c;
    const r = mem.replay!;
    const step = r.plan.steps[r.cursor];
    const none = { usage: { inputTokens: 0, outputTokens: 0 }, cost: 0, observeMs: 0, modelMs: 0, callId: '' };
    if (!step) {
      if (r.plan.handOverAt) return this.handOver(c, `the recording goes on with ${stepLine(r.plan.handOverAt)}, which needs you`);
      if (!r.plan.done) return this.handOver(c, 'the recording ends before the task did');
      if (r.plan.needsAnswer) {
        // The steps are done; the answer is read off the page as it is now, by one model call.
        r.off = true;
        mem.answerOnly = true;
        mem.messages.push({ role: 'user', content: c.mask(`The recorded steps of this task were performed again without you:\n${r.done.map((l, i) => `${i + 1}. ${l}`).join('\n')}\nThe page below is where they ended. Give the task's answer from it now by calling done.`) });
        return undefined;
      }
      return this.act(c, { ...none, tool: this.tools.get('done')!, args: r.plan.done.args, replay: { step: r.plan.done } });
    }
    const url = session.page.url();
    if (step.action !== 'navigate' && !samePage(url, step.urlBefore)) return this.handOver(c, `it was recorded on ${step.urlBefore}, but the page is now ${url}`);
    let pinned: FoundElement | undefined;
    if (step.element) {
      pinned = (await findAgain(session.page, step.element)) ?? undefined;
      if (!pinned) return this.handOver(c, `its element (${step.element.role} "${step.element.name || step.element.text || step.element.css}") is no longer on the page`);
    }
    const { tool, args } = replayedCall(step, this.tools);
    if (!tool) return this.handOver(c, `the recorded action ${step.action} cannot be performed again as recorded`);
    try {
      const result = await this.act(c, { ...none, tool, args, replay: { step, pinned } });
      r.cursor += 1;
      r.done.push(stepLine(step));
      log.info({ action: step.action, strategy: pinned?.strategy }, 'recorded step replayed');
      return result;
    } catch (err) {
      if (!(err instanceof ReplayMismatch)) throw err;
      return this.handOver(c, err.message);
    }
  }

  /** The replay stops here: the agent takes over with the original prompt, what was replayed and what remains as a hint. */
  private handOver(c: StepContext, reason: string): undefined {
    const r = c.mem.replay!;
    r.off = true;
    const rest = r.plan.steps.slice(r.cursor).map((s, i) => `${i + 1}. ${stepLine(s)}`);
    c.mem.messages.push({
      role: 'user',
      content: c.mask(
        `This task replays an earlier run of it. ${r.done.length ? `These recorded steps were performed again:\n${r.done.map((l, i) => `${i + 1}. ${l}`).join('\n')}\n` : ''}` +
          `The next recorded step could not be performed: ${reason}. Take over from here and finish the task.` +
          (rest.length ? `\nWhat the earlier run did from here (a hint only: the page may have changed):\n${rest.join('\n')}` : ''),
      ),
    });
    c.log.info({ reason: c.mask(reason), replayed: r.done.length }, 'replay handed over to the agent');
    return undefined;
  }

  /**
   * Performs the chosen action: through the gate (secrets put in, the policy asked), then
   * the tool. Everything it reports (to the model, events, logs, the workflow) is masked.
   */
  private async act(
    c: StepContext,
    a: {
      tool: AgentTool;
      args: unknown;
      callId: string;
      usage: StepResult['usage'];
      cost: number;
      observeMs: number;
      modelMs: number;
      approved?: boolean;
      /** The agent's words that came with the call. */
      reasoning?: string;
      /** A recorded step performed again: no model call to answer, and a mismatch hands over to the agent. */
      replay?: { step: RecordedStep; pinned?: FoundElement };
    },
  ): Promise<StepResult & { cost: number }> {
    const { input, session, mem, signal, log, mask } = c;
    const { tool, callId } = a;
    const t2 = performance.now();
    const timings = () => ({ observeMs: round(a.observeMs), modelMs: round(a.modelMs), actMs: round(performance.now() - t2) });
    const base: Omit<StepResult, 'kind'> & { cost: number; action: { name: string; target?: string } } = { usage: a.usage, cost: a.cost, action: { name: tool.name } };
    const ctx = this.toolContext(session, signal, mem);
    ctx.pinned = a.replay?.pinned;
    ctx.record = {};
    const urlBefore = ctx.page.url();
    const by = a.replay ? 'replay' : 'agent';
    const record = (outcome: RecordedStep['outcome'], more: { error?: string; summary?: string } = {}) =>
      this.record(c, { by, action: tool.name, args: recordedArgs(tool.name, a.args, ctx.record?.element !== undefined), element: ctx.record?.element, urlBefore, urlAfter: safeUrl(ctx), outcome, reasoning: a.reasoning ? mask(a.reasoning) : undefined, ...more });
    try {
      const gate = await gateAction({ tool, args: a.args, ctx, policy: mem.policy ?? null, secrets: c.secrets, approved: a.approved });
      if (a.replay && gate.kind !== 'perform') throw new ReplayMismatch(`the automation policy ${gate.kind === 'block' ? 'blocks' : 'asks a human to approve'} it`);
      if (gate.kind === 'block') {
        await record('blocked', { error: mask(gate.reason) });
        base.timings = timings();
        return this.blocked(c, base, callId, mask(gate.reason));
      }
      if (gate.kind === 'approve') {
        base.timings = timings();
        mem.pendingApproval = { callId, tool: tool.name, args: a.args, element: await elementUnderIndex(ctx, a.args) };
        base.action.target = 'waiting for approval';
        log.info({ action: tool.name, reason: mask(gate.reason) }, 'agent action waits for approval');
        return { ...base, kind: 'human_input', humanInput: { type: 'approval_needed', value: mask(gate.request) } };
      }
      const result = await tool.execute(ctx, gate.args as never);
      base.timings = timings();
      if (result.done && result.done.success !== false) {
        const checked = await checkStructuredOutput(input.params, result.done.message);
        if (!checked.ok) {
          mem.outputCorrections = (mem.outputCorrections ?? 0) + 1;
          if (mem.outputCorrections > MAX_OUTPUT_CORRECTIONS) {
            throw new TaskFailure('INVALID_STRUCTURED_OUTPUT', `The result did not match the requested format after ${MAX_OUTPUT_CORRECTIONS} corrections: ${checked.error}`);
          }
          mem.messages.push({ role: 'tool', toolCallId: callId, content: mask(`Not accepted: ${checked.error} Call done again with a corrected answer.`) });
          log.info({ error: mask(checked.error), corrections: mem.outputCorrections }, 'structured output refused');
          return { ...base, kind: 'continue' };
        }
        result.done.message = checked.value;
      }
      mem.failedActions = 0;
      const note = await reportRefusals(mem.guard, ctx.page);
      const summary = mask(`${a.approved ? 'Approved by the human. ' : ''}${result.summary}${note}`);
      if (!a.replay) mem.messages.push({ role: 'tool', toolCallId: callId, content: summary });
      await record('ok', { summary });
      const target = result.target === undefined ? undefined : mask(result.target);
      base.action.target = target;
      // In a replay, each action says whether the recording or the agent performed it.
      const performedBy = a.replay ? 'replayed' : 'agent';
      this.opts.onEvent?.(input.sessionId, { type: 'action', taskId: input.taskId, data: { name: tool.name, target, ...(input.params.replay ? { by: performedBy } : {}) } });
      log.info({ action: tool.name, target, by: performedBy }, 'agent action');
      if (a.replay) base.replayed = true;
      if (result.done) return { ...base, kind: 'done', message: mask(result.done.message), success: result.done.success };
      if (result.humanInput) return { ...base, kind: 'human_input', humanInput: { type: result.humanInput.type, value: mask(result.humanInput.value) } };
      return { ...base, kind: 'continue' };
    } catch (err) {
      if (signal.aborted) throw err;
      if (session.crashed) throw new TaskFailure('PAGE_CRASH', 'The browser page crashed');
      if (isServiceError(err) && FATAL_CODES.has(err.code)) throw err;
      const reason = mask(`${err instanceof Error ? err.message.split('\n')[0] : String(err)}${isServiceError(err) && err.code === 'ELEMENT_NOT_FOUND' ? indexesHint(mem.lastObservation) : ''}`);
      if (err instanceof ReplayMismatch) throw err;
      await record('failed', { error: reason });
      if (a.replay) throw new ReplayMismatch(`it failed: ${reason}`);
      base.timings = timings();
      mem.failedActions += 1;
      mem.lastFailureCode = isServiceError(err) ? err.code : 'ACTION_FAILED';
      mem.messages.push({ role: 'tool', toolCallId: callId, content: `Action failed: ${reason}` });
      log.info({ action: tool.name, reason, failures: mem.failedActions }, 'agent action failed');
      if (mem.failedActions >= MAX_CONSECUTIVE_FAILED_ACTIONS) {
        throw new TaskFailure(mem.lastFailureCode, `Action ${tool.name} failed ${mem.failedActions} times in a row: ${reason}`);
      }
      return { ...base, kind: 'continue' };
    }
  }

  /** A blocked action: not performed, the model told why, watchers told by an action event. */
  private blocked(c: StepContext, base: Omit<StepResult, 'kind'> & { cost: number; action: { name: string; target?: string } }, callId: string, reason: string): StepResult & { cost: number } {
    const { input, mem, log } = c;
    mem.messages.push({
      role: 'tool',
      toolCallId: callId,
      content: `Not performed: the automation policy blocks this action (${reason}). Find another way to do the task that the policy allows, or call done with success=false if there is none.`,
    });
    base.action.target = `blocked: ${reason}`;
    this.opts.onEvent?.(input.sessionId, { type: 'action', taskId: input.taskId, data: { name: base.action.name, blocked: true, reason } });
    log.info({ action: base.action.name, reason }, 'agent action blocked by the policy');
    mem.failedActions += 1;
    mem.lastFailureCode = 'POLICY_BLOCKED';
    if (mem.failedActions >= MAX_CONSECUTIVE_FAILED_ACTIONS) {
      throw new TaskFailure('POLICY_BLOCKED', `The agent tried ${mem.failedActions} actions in a row that the policy blocks; the last: ${base.action.name} (${reason})`);
    }
    return { ...base, kind: 'continue' };
  }

  /** The human answered an approval: an approving answer performs the action, any other refuses it. */
  private async settleApproval(c: StepContext, pending: NonNullable<Memory['pendingApproval']>, answer: string): Promise<StepResult & { cost: number }> {
    const { input, mem, log } = c;
    const tool = this.tools.get(pending.tool)!;
    const usage = { inputTokens: 0, outputTokens: 0 };
    if (approves(answer)) {
      const moved = await approvalMoved(this.toolContext(c.session, c.signal, mem), pending.element, pending.args);
      if (moved) {
        mem.messages.push({ role: 'tool', toolCallId: pending.callId, content: c.mask(`Not performed: ${moved}. Look at the page again and ask again if the action is still needed.`) });
        this.opts.onEvent?.(input.sessionId, { type: 'action', taskId: input.taskId, data: { name: tool.name, refused: true, reason: 'the element changed after the approval was asked' } });
        log.info({ action: tool.name }, 'approved action not performed: its element changed');
        return { usage, cost: 0, kind: 'continue', action: { name: tool.name, target: 'element changed' } };
      }
      log.info({ action: tool.name }, 'approved by the human');
      return this.act(c, { tool, args: pending.args, callId: pending.callId, usage, cost: 0, observeMs: 0, modelMs: 0, approved: true });
    }
    mem.messages.push({
      role: 'tool',
      toolCallId: pending.callId,
      content: `Not performed: the human did not approve it (their answer: ${JSON.stringify(answer)}). Find another way, or call done with success=false if there is none.`,
    });
    this.opts.onEvent?.(input.sessionId, { type: 'action', taskId: input.taskId, data: { name: tool.name, refused: true, reason: 'not approved by the human' } });
    log.info({ action: tool.name }, 'refused by the human');
    return { usage, cost: 0, kind: 'continue', action: { name: tool.name, target: 'not approved' } };
  }

  /** A tool call left waiting for approval is answered, so the conversation stays well-formed. */
  private answerPendingApproval(mem: Memory, content: string): void {
    if (!mem.pendingApproval) return;
    mem.messages.push({ role: 'tool', toolCallId: mem.pendingApproval.callId, content });
    mem.pendingApproval = undefined;
  }

  private memoryOf(sessionId: string): Memory {
    let mem = this.memory.get(sessionId);
    if (!mem) {
      mem = { messages: [], failedActions: 0, repetition: new RepetitionGuard() };
      this.memory.set(sessionId, mem);
    }
    if (mem.messages.length > KEEP_MESSAGES) trimHistory(mem.messages);
    return mem;
  }

  /** Adds a step to the task's recording (never fails the step). */
  private async record(c: StepContext, step: Omit<RecordedStep, 'seq' | 'at'>): Promise<void> {
    const recorder = this.opts.recorder;
    if (!recorder) return;
    const { input } = c;
    const args = this.opts.vault ? (this.opts.vault.maskDeep(input.sessionId, step.args) as Record<string, unknown>) : step.args;
    // Stored off the step's path (the recorder keeps the order; the task's end waits for it).
    void recorder.add({ userId: input.userId, sessionId: input.sessionId, taskId: input.taskId }, { ...step, args, urlBefore: c.mask(step.urlBefore), urlAfter: c.mask(step.urlAfter) });
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
      egress: session.egress,
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

/** The tools less the one named (never done: the task can always be finished). */
function withoutTool(tools: LlmToolSpec[], name: string | undefined): LlmToolSpec[] {
  return name && name !== 'done' ? tools.filter((t) => t.name !== name) : tools;
}

/** For an index that is not on the page: which ones the latest observation offers. */
export function indexesHint(observation: string | undefined): string {
  const indexes = observedIndexes(observation ?? '');
  if (!indexes.length) return '. The latest observation lists no elements: scroll, wait or navigate first.';
  const shown = indexes.length <= 12 ? indexes.map((i) => `[${i}]`).join(', ') : `[${Math.min(...indexes)}] to [${Math.max(...indexes)}] (${indexes.length} elements)`;
  return `. Use an index of the latest observation: ${shown}.`;
}

/** The arguments as recorded: an element's index of the moment means nothing later (the element description replaces it). */
function recordedArgs(tool: string, args: unknown, described: boolean): Record<string, unknown> {
  const copy = { ...(args as Record<string, unknown>) };
  if (described && tool !== 'switch_tab') delete copy.index;
  return copy;
}

function safeUrl(ctx: ToolContext): string {
  try {
    return ctx.page.url();
  } catch {
    return '';
  }
}

/** A person's typing, performed again: the same keys into whatever has the focus (never offered to the model). */
const typeFocusedTool: AgentTool<z.ZodObject<{ text: z.ZodString }>> = {
  name: 'manual_type',
  description: 'Types into the focused element',
  schema: z.object({ text: z.string() }),
  async execute(ctx, { text }) {
    await abortable(ctx.page.keyboard.type(text), ctx.signal);
    return { summary: `Typed ${[...text].length} characters`, target: `${[...text].length} characters` };
  },
};

/** The tool and arguments that perform a recorded step again (a human's click is a click on the same element). */
function replayedCall(step: RecordedStep, tools: Map<string, AgentTool>): { tool?: AgentTool; args: unknown } {
  const index = step.element ? { index: 1 } : {};
  switch (step.action) {
    case 'manual_click':
      return { tool: tools.get('click_element'), args: index };
    case 'manual_key_press':
      return { tool: tools.get('send_keys'), args: { keys: String(step.args.key ?? '') } };
    case 'manual_type':
      // A person's typing into a secret field was not recorded: only the agent can type it again.
      return typeof step.args.text === 'string' ? { tool: typeFocusedTool as AgentTool, args: { text: step.args.text } } : { args: {} };
    default: {
      const tool = tools.get(step.action);
      if (!tool) return { args: {} };
      const parsed = tool.schema.safeParse({ ...step.args, ...index });
      return parsed.success ? { tool, args: parsed.data } : { args: {} };
    }
  }
}

function estimateTokens(messages: LlmMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += m.content.length;
    if (m.role === 'assistant' && m.toolCalls) for (const c of m.toolCalls) chars += c.arguments.length + c.name.length;
    if (m.role === 'user' && m.image) chars += 4000;
  }
  return Math.ceil(chars / 4);
}
