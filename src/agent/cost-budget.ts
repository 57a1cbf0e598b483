/**
 * Dollar budgets, enforced outside the model: before each model call the call's cost is
 * estimated from the prompt's size and the model's price, and the call is not made when it
 * would pass what the task's `maxCost` or its owner's daily spending limit leaves. The
 * output tokens the call may produce are capped by what is left after its prompt, so a call
 * that is made cannot pass the budget either.
 */
import { roundUsd as round6 } from '../contracts/money';
import type { TokenPrice } from './llm/pricing';

/** Prompt sizes are estimated at 4 characters a token; real tokenizers count up to a quarter more. */
export const PROMPT_ESTIMATE_MARGIN = 1.25;
/** The fewest output tokens a call is made with (a tool call needs at least these). */
export const MIN_CALL_OUTPUT_TOKENS = 16;

export type BudgetKind = 'maxCost' | 'dailyLimit' | 'balance';

/** The budget a step's calls are held to: the tighter of the two, in USD left when the step began. */
export interface CostBudget {
  kind: BudgetKind;
  /** The budget itself (the task's maxCost, the daily limit, or the balance), USD. */
  limit: number;
  /** What it leaves for this step's calls, USD. */
  left: number;
}

/**
 * The tightest of the task's budget (what maxCost leaves), the daily one (what the owner's
 * limit leaves today) and the owner's balance, the last two less what this task has spent
 * and not yet been charged (every running task's steps are charged as they happen, so
 * tasks running at once each see what the others spent).
 */
export function tighterBudget(task: { maxCost: number; left: number } | undefined, daily: { limit: number; left: number } | undefined, uncharged: number, balance?: number): CostBudget | undefined {
  const own = task ? { kind: 'maxCost' as const, limit: task.maxCost, left: task.left } : undefined;
  const day = daily ? { kind: 'dailyLimit' as const, limit: daily.limit, left: round6(daily.left - uncharged) } : undefined;
  const funds = balance !== undefined ? { kind: 'balance' as const, limit: balance, left: round6(balance - uncharged) } : undefined;
  let tightest: CostBudget | undefined;
  for (const b of [own, day, funds]) if (b && (!tightest || b.left < tightest.left)) tightest = b;
  return tightest;
}

const usd = (tokens: number, perMillion: number) => (tokens * perMillion) / 1_000_000;

export type CallAllowance = { ok: true; maxTokens: number } | { ok: false; estimatedCost: number };

/**
 * Whether a call with a prompt of about `promptTokens` may be made with `left` USD, and the
 * output tokens it may then produce (at most `maxTokens`).
 */
export function allowCall(left: number, price: TokenPrice | undefined, promptTokens: number, maxTokens: number): CallAllowance {
  if (!price) return { ok: true, maxTokens };
  const promptCost = usd(promptTokens * PROMPT_ESTIMATE_MARGIN, price.input);
  const estimatedCost = round6(promptCost + usd(MIN_CALL_OUTPUT_TOKENS, price.output));
  if (estimatedCost > left) return { ok: false, estimatedCost };
  if (price.output <= 0) return { ok: true, maxTokens };
  const affordable = Math.floor(((left - promptCost) * 1_000_000) / price.output);
  return { ok: true, maxTokens: Math.max(MIN_CALL_OUTPUT_TOKENS, Math.min(maxTokens, affordable)) };
}

