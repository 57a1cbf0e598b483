/** What the parts of an agent step (begin-task, decide, act, replay-step) share. */
import type { Page } from 'playwright-core';
import type { BrowserSession } from '../browser/pool';
import type { SessionMessage } from '../contracts/events';
import type { PolicyDocument } from '../contracts/policy-rules';
import type { RecordedStep } from '../contracts/recording';
import type { StepInput, StepResult } from '../contracts/session-types';
import type { Logger } from '../logger';
import type { Recorder } from '../recording/recorder';
import type { LlmClient } from './llm/types';
import type { TaskSecrets } from './secrets/secrets';
import type { SecretVault } from './secrets/vault';
import type { TaskMemory } from './task-memory';
import type { ToolContext } from './types';
import type { FileProvider } from '../browser/task-files';

/** Where automation policies come from (the store); a session's policy is read once per task. */
export interface PolicyProvider {
  get(policyId: string, userId: string): Promise<PolicyDocument | null>;
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
  /** What each user may still spend (charged so far: every running task's steps included), and the charge of what a step spent. */
  spending?: Spending;
  /** Reads the recording a replayed task performs. */
  recordings?: { list(taskId: string, userId: string): Promise<RecordedStep[]> };
}

export interface Spending {
  /** The balance, what the daily limit leaves today (undefined without one), and what the task was charged so far. */
  left(userId: string, taskId: string): Promise<{ balance: number; daily?: { limit: number; left: number }; taskCharged: number } | undefined>;
  /** Charges the user (and the task's share) what was spent just now. */
  charge(userId: string, usd: number, taskId?: string): Promise<void>;
}

/** What a step ends with: its result for the workflow and what its model tokens cost. */
export type AgentStepResult = StepResult & { cost: number };

/** What one step works with, handed to the parts of the step. */
export interface StepContext {
  input: StepInput;
  session: BrowserSession;
  memory: TaskMemory;
  signal: AbortSignal;
  log: Logger;
  /** The model tokens the step has used so far (read by the caller when the step is cancelled). */
  spent: StepResult['usage'];
  /** The agent's words in this step (masked, clipped), as soon as the model said them. */
  heard: { said?: string };
  secrets?: TaskSecrets;
  /** Puts placeholders back where secret values show up in outgoing text. */
  mask: (text: string) => string;
  options: AgentRunnerOptions;
}

/** Tells the session's watchers (live events). */
export function emit(step: StepContext, message: SessionMessage): void {
  step.options.onEvent?.(step.input.sessionId, message);
}

/** What the tools act on: the session's active tab, its context, the task's files. */
export function toolContextOf(step: StepContext): ToolContext {
  const { session } = step;
  return {
    files: step.memory.files,
    get page(): Page {
      return session.page;
    },
    context: session.context,
    setActivePage: (page) => (session.page = page),
    navigationTimeoutMs: step.options.navigationTimeoutMs,
    signal: step.signal,
    egress: session.egress,
  };
}

/** The most of the agent's words a step result carries (the workflow keeps the last ones). */
const MAX_SAID = 1_000;
export const clipWords = (text: string): string => (text.length > MAX_SAID ? `${text.slice(0, MAX_SAID - 1)}…` : text);
