import type { BrowserContext, Frame, Locator, Page } from 'playwright-core';
import type { ActionName, AgentAction, ManualAction } from '../contracts/actions';
import type { ElementDescription } from '../contracts/recording';
import type { z } from 'zod';
import type { ActionFacts } from './policy/policy';
import type { TaskFiles } from '../browser/task-files';
import type { FormPress } from './tools/form-button';

/** What the agent sees of the browser at one step. */
export interface Observation {
  url: string;
  title: string;
  tabs: { index: number; url: string; title: string; active: boolean }[];
  /**
   * The page as text for the model: the interactive elements, one per line in the form
   * `[<index>] <role> "<accessible label>"` (optionally followed by ` key=value` hints such
   * as value="..." or type=email), a summary of what lies outside the viewport, and the
   * visible text; kept within the token budget.
   */
  text: string;
  /** Number of interactive elements indexed (in and out of view). */
  elementCount: number;
  /** Estimated size of `text` in tokens. */
  tokens: number;
  /** JPEG screenshot (its secret fields painted over), base64, when asked for. */
  screenshot?: string;
}

export interface ObserveOptions {
  tokenBudget: number;
  screenshot?: boolean;
}

/** What an action reports back: to the model (summary), to watchers (target) and to the task. */
export interface ToolResult {
  /** Human-readable outcome, sent back to the model as the tool result. */
  summary: string;
  /** What was acted on, for the `action` event (`data.target`); secrets masked. */
  target?: string;
  /** Set by `done`: the task's final answer. */
  done?: { message: string; success: boolean };
  /** Set by `request_human_input`: the task pauses with a guardrail. */
  humanInput?: { type: string; value: string };
  /** The action was said, not done: the page is as it was (a navigate to the page the tab shows). */
  unchanged?: boolean;
  /** Set by a click on a button of a form that does not send it, the page where it was: it left the form as it was (`plain`) or chose a value of it (`pressed`). */
  formPress?: FormPress;
}

export interface ToolContext {
  /** The active tab. */
  page: Page;
  context: BrowserContext;
  /** Makes another tab the active one (switch_tab, new tabs opened by clicks). */
  setActivePage(page: Page): void;
  navigationTimeoutMs: number;
  signal: AbortSignal;
  /** The files the task may put into file inputs (task `files` and the environment's files). */
  files?: TaskFiles;
  /**
   * A replayed action's element, found again by its recorded description: element tools act
   * on it instead of the element their `index` names.
   */
  pinned?: { locator: Locator; frame: Frame };
  /** Filled by element tools with the description of what they act on, for the task's recording. */
  record?: { element?: ElementDescription };
  /** What the network guard refused for this session's pages (hosts, since a time). */
  egress?: { refusalOf(host: string, since: number): { host: string; reason: string } | undefined };
}


/**
 * One action of the vocabulary and everything it means: what the model sees (name,
 * description, schema), what it does (execute), what the policy judges of it (policyFacts),
 * what the recording keeps of it (recording) and what it becomes in the exported Playwright
 * test (playwright). Every piece is required: a tool without one does not compile.
 */
export interface AgentTool<S extends z.ZodType = z.ZodType, A extends ActionName = ActionName> {
  /** Its action in the vocabulary (contracts/actions.ts): an agent action, or a manual one a replay performs again. */
  name: A;
  description: string;
  schema: S;
  execute(ctx: ToolContext, args: z.infer<S>): Promise<ToolResult>;
  /** What the policy judges of the action besides its page and what it types, read before it runs. */
  policyFacts(request: FactsRequest<z.infer<S>>): Promise<FactsPart>;
  recording: RecordingPiece;
  playwright: StepScript;
}

/** What an action's policy facts are read from. */
export interface FactsRequest<Args> {
  ctx: ToolContext;
  /** The arguments, secrets in place. */
  args: Args;
  /** What the action would type (secrets in place). */
  typed: string[];
  /** Read the element and its form from the page: only when the policy has rules that need them. */
  fromPage: boolean;
}

/** What an action adds to its facts: where it leads, what it acts on, what it would send. */
export type FactsPart = Partial<Pick<ActionFacts, 'targetUrl' | 'texts' | 'data'>>;

/** What the recording keeps of an action's arguments. */
export interface RecordingPiece {
  /**
   * What its `index` argument names: an element of the moment (the recording keeps the
   * element's description instead, when it has one), a tab (kept), or nothing (no index).
   */
  index: 'element' | 'tab' | 'none';
}

/** What the exported Playwright test is written with, for one recorded step. */
export interface ScriptContext {
  /** The locator of the element the step acted on, when the recording described it. */
  on?: string;
  /** A typed text as an expression: the secrets it names are read from the environment. */
  text(value: string): string;
  /** A file to upload as an expression: its path is read from the environment. */
  file(fileId: string): string;
}

/** A recorded step (its arguments as recorded) as lines of the exported Playwright test; none when it cannot be written. */
export type StepScript = (args: Record<string, unknown>, script: ScriptContext) => string[];

/** What a person does by hand in the live view, as the exported Playwright test performs it. */
export interface ManualActionDefinition<M extends ManualAction = ManualAction> {
  name: M;
  playwright: StepScript;
}

/** One tool per agent action, keyed by the action list: an action without its tool does not compile. */
export type ToolRegistry = { readonly [A in AgentAction]: AgentTool<z.ZodType, A> };

/** One definition per manual action, keyed by the action list. */
export type ManualActionRegistry = { readonly [M in ManualAction]: ManualActionDefinition<M> };
