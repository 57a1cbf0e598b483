import type { BrowserContext, Frame, Locator, Page } from 'playwright-core';
import type { ActionName } from '../contracts/actions';
import type { ElementDescription } from '../contracts/recording';
import type { z } from 'zod';
import type { TaskFiles } from '../browser/task-files';

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


export interface AgentTool<S extends z.ZodType = z.ZodType> {
  /** Its action in the vocabulary (contracts/actions.ts): an agent action, or a manual one a replay performs again. */
  name: ActionName;
  description: string;
  schema: S;
  execute(ctx: ToolContext, args: z.infer<S>): Promise<ToolResult>;
}

