import { TaskFailure } from '../contracts/errors';
import type { BrowserPool } from '../browser/pool';
import type { Logger } from '../logger';
import type { StepInput, StepResult } from '../contracts/session-types';
import { act } from './act';
import { keepRest, performListed } from './action-list';
import { beginTask } from './begin-task';
import { decide, type Decision } from './decide';
import { computeCost } from './llm/pricing';
import { replayNext } from './replay-step';
import { repetitionNote, type RepetitionVerdict } from './repetition';
import type { TaskSecrets } from './secrets/secrets';
import { settleApproval } from './settle-approval';
import type { AgentRunnerOptions, AgentStepResult, StepContext } from './step-context';
import { TaskMemory, type SavedMemory } from './task-memory';
import type { BrowserContext } from 'playwright-core';
import { unrestoredNote } from '../browser/page-state';
import { guardNavigations } from './policy/navigation-guard';
import { CompiledPolicy } from './policy/policy';

export type { AgentRunnerOptions, PolicyProvider } from './step-context';
export { indexesHint } from './act';

/**
 * Runs one agent step at a time: observe the page, ask the model for one action, do it.
 * The conversation lives here, beside the browser; the workflow only sees summaries.
 */
export class AgentRunner {
  private readonly memories = new Map<string, TaskMemory>();
  /** Conversations of hibernated sessions woken here, taken up by their task's next step. */
  private readonly woken = new Map<string, SavedMemory>();

  constructor(
    private readonly pool: BrowserPool,
    private readonly options: AgentRunnerOptions,
  ) {}

  forget(sessionId: string): void {
    this.memories.delete(sessionId);
    this.woken.delete(sessionId);
    this.options.vault?.forget(sessionId);
  }

  /** What the agent remembers of a session's task, for it to go on on any worker after hibernation. */
  saveMemory(sessionId: string): SavedMemory | undefined {
    return this.memories.get(sessionId)?.save();
  }

  /** A hibernated session woke here: its task's next step goes on from this conversation. */
  restoreMemory(sessionId: string, saved: SavedMemory): void {
    this.woken.set(sessionId, saved);
  }

  /**
   * A restored session's pages load under its policy: when the policy restricts domains, its
   * guard is on the context before the first of them (beginTask takes the same guard up).
   */
  async guardContext(context: BrowserContext, { policyId, userId }: { policyId?: string; userId: string }): Promise<void> {
    if (!policyId) return;
    const document = await this.options.policies?.get(policyId, userId);
    const policy = document ? new CompiledPolicy(document) : null;
    if (policy?.restrictsDomains) (await guardNavigations(context)).policy = policy;
  }

  /**
   * One step. `spent` adds up the model tokens of the step as they are used, and `heard`
   * takes the agent's words as soon as the model says them, so a step cancelled halfway
   * (pause, stop, takeover, timeout) still has its tokens counted and its words kept.
   */
  async step(input: StepInput, signal: AbortSignal, log: Logger, spent: StepResult['usage'] = { inputTokens: 0, outputTokens: 0 }, heard: { said?: string } = {}): Promise<AgentStepResult> {
    const session = this.pool.get(input.sessionId);
    if (!session) throw new TaskFailure('INSTANCE_LOST', 'The browser of this session is no longer available');
    if (session.crashed) throw new TaskFailure('PAGE_CRASH', 'The browser page crashed');
    const memory = this.memoryOf(input.sessionId);
    session.artifacts.taskId = input.taskId;
    const vault = this.options.vault;
    const mask = (text: string) => (vault ? vault.mask(input.sessionId, text) : text);
    const step: StepContext = { input, session, memory, signal, log, spent, heard, secrets: this.secretsOf(input), mask, options: this.options };
    if (memory.guard) memory.guard.acting = true;
    try {
      return await this.runStep(step);
    } finally {
      if (memory.guard) memory.guard.acting = false;
    }
  }

  /** What model tokens cost at the configured prices (USD). */
  costOf(usage: StepResult['usage']): number {
    return computeCost(usage, this.options.llm.model, this.options.prices);
  }

  /** The task's secrets, held from the hand-over; a worker that should hold them but does not asks for them again. */
  private secretsOf(input: StepInput): TaskSecrets | undefined {
    const vault = this.options.vault;
    if (input.secrets?.length && vault) vault.hold(input.sessionId, input.taskId, input.secrets);
    if (!input.hasSecrets) return undefined;
    const held = vault?.forTask(input.sessionId, input.taskId);
    if (!held) throw new TaskFailure('SECRETS_UNAVAILABLE', 'This worker does not hold the secrets of the task');
    return held;
  }

  private memoryOf(sessionId: string): TaskMemory {
    let memory = this.memories.get(sessionId);
    if (!memory) {
      memory = new TaskMemory();
      this.memories.set(sessionId, memory);
    }
    memory.trimHistory();
    return memory;
  }

  /** A new task begins; the human's answer is taken; a replay goes on; the rest of an action list; or the model decides and the action is performed. */
  private async runStep(step: StepContext): Promise<AgentStepResult> {
    const { input, memory } = step;
    if (memory.taskId !== input.taskId) {
      memory.dropList('the task ended before it.');
      await beginTask(step);
      const saved = this.woken.get(input.sessionId);
      this.woken.delete(input.sessionId);
      if (saved?.taskId === input.taskId) memory.restore(saved);
    }
    tellUnrestored(step);
    if (input.humanReply !== undefined) {
      memory.dropList('a human answered before it; look at the page again.');
      const pending = memory.takePendingApproval();
      if (pending) return settleApproval(step, pending, input.humanReply);
      memory.tell(`The human answered your request: ${input.humanReply}`);
    }
    if (memory.replaying) {
      const replayed = await replayNext(step);
      if (replayed) return replayed;
    }
    if (memory.list) {
      const listed = await performListed(step);
      if (listed) return listed;
    }
    return this.decideAndAct(step);
  }

  /** The model chooses the step's action (perhaps a list of them); the first is performed, the rest kept for the next steps. */
  private async decideAndAct(step: StepContext): Promise<AgentStepResult> {
    const { memory } = step;
    const decision = await decide(step);
    const cost = this.costOf(step.spent);
    const repeated = checkRepetition(step, decision);
    const { tool, args, call, reasoning, observeMs, modelMs, rest, pageText } = decision;
    const result = await act(step, { tool, args, callId: call.id, usage: step.spent, cost, observeMs, modelMs, reasoning });
    const failed = memory.failuresInRow > 0 || memory.held;
    keepRest(step, { tool, args, callId: call.id }, rest, pageText, result, failed);
    if (repeated.kind === 'warn') {
      memory.notes.push(repetitionNote(tool.name, repeated.count));
      step.log.info({ action: tool.name, repeats: repeated.count }, 'agent repeats an action on an unchanged page');
    }
    return result;
  }
}

/** Form values a wake could not put back (their tab shows another site now): the model is told, once. */
function tellUnrestored(step: StepContext): void {
  const { session, memory, mask } = step;
  const unrestored = session.unrestored;
  if (!unrestored?.length) return;
  session.unrestored = undefined;
  memory.tell(mask(unrestoredNote(unrestored)));
}

/** The same action chosen again on an unchanged page: counted, and the task ends when it is once too many. */
function checkRepetition(step: StepContext, decision: Decision): RepetitionVerdict {
  const { tool, args, call, pageText } = decision;
  const repeated = step.memory.repetition.note(tool.name, args, pageText);
  if (repeated.kind === 'stop') {
    // The call is answered, so a later task of the session sends a well-formed conversation.
    step.memory.answerCall(call.id, 'Not performed: the task ended, as this action was repeated on a page that did not change.');
    throw new TaskFailure('TASK_LOOP_DETECTED', `The agent chose ${tool.name} with the same arguments ${repeated.count} times in a row on a page that did not change`, { action: tool.name, repeats: repeated.count });
  }
  return repeated;
}
