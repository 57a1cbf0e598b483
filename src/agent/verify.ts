/**
 * Verified results: a task's `verify` checks, run on the final page when the agent calls
 * done. `urlMatches`, `textVisible` and `elementVisible` are read from the page; `criteria`
 * is judged by a separate model call from the final page and the answer, with its reason.
 * The agent is told the checks that failed and goes on, a few times; then the task fails
 * with TASK_NOT_VERIFIED.
 */
import type { Page } from 'playwright-core';
import { TaskFailure } from '../contracts/errors';
import type { VerifyCheck, Verdict } from '../contracts/session-types';
import { compileUrlPattern, matchesLowercased } from '../contracts/url-patterns';
import type { StepContext } from './step-context';
import { observePage } from './observe/observe';
import { clip } from './observe/compose';
import type { LlmToolSpec } from './llm/types';
import { tokensOf } from './context-budget';
import { affordableOutput, costBudgetOf } from './decide';

/** Failed verifications told to the agent before the task fails. */
export const MAX_VERIFY_RETRIES = 3;
/** The final page as the judge of a criterion reads it, in tokens. */
const JUDGE_PAGE_TOKENS = 3_000;
const CHECK_TIMEOUT_MS = 3_000;

const VERDICT_TOOL: LlmToolSpec = {
  name: 'verdict',
  description: 'Say whether the criterion is met.',
  parameters: {
    type: 'object',
    properties: { met: { type: 'boolean', description: 'true only when the page and the answer show the criterion is met' }, reason: { type: 'string', description: 'One sentence: what on the page or in the answer shows it' } },
    required: ['met', 'reason'],
  },
};

const JUDGE_SYSTEM =
  'You check the result of a browser agent against one criterion. You get the task, the agent\'s final answer and the final page. Judge only from them: the criterion is met when they show it, not when the agent merely claims it. Call verdict.';

/** Runs the checks on the final page; the verdicts, in the order of the checks. */
export async function runChecks(step: StepContext, checks: VerifyCheck[], answer: string): Promise<Verdict[]> {
  const verdicts: Verdict[] = [];
  for (const check of checks) verdicts.push(await runCheck(step, check, answer));
  return verdicts;
}

async function runCheck(step: StepContext, check: VerifyCheck, answer: string): Promise<Verdict> {
  const page = step.session.page;
  const { mask } = step;
  if ('urlMatches' in check) {
    const url = page.url();
    const passed = matchesLowercased(compileUrlPattern(check.urlMatches), url.toLowerCase());
    return { check: 'urlMatches', value: check.urlMatches, passed, reason: mask(`The page is at ${clip(url, 300)}`) };
  }
  if ('textVisible' in check) {
    const passed = await textVisible(page, check.textVisible);
    return { check: 'textVisible', value: check.textVisible, passed, reason: passed ? 'The text is on the page' : 'The text is not on the page' };
  }
  if ('elementVisible' in check) {
    const passed = await elementVisible(page, check.elementVisible);
    return { check: 'elementVisible', value: check.elementVisible, passed, reason: passed ? 'A visible element fits the description' : 'No visible element fits the description' };
  }
  const judged = await judge(step, check.criteria, answer);
  return { check: 'criteria', value: check.criteria, passed: judged.met, reason: mask(judged.reason) };
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** The text (whitespace and letter case aside) is in the visible text of the page or one of its frames. */
async function textVisible(page: Page, text: string): Promise<boolean> {
  const wanted = normalize(text);
  for (const frame of page.frames()) {
    const seen = await frame
      .locator('body')
      .innerText({ timeout: CHECK_TIMEOUT_MS })
      .catch(() => '');
    if (normalize(seen).includes(wanted)) return true;
  }
  return false;
}

/**
 * A visible element fits the description: `role "name"` (an ARIA role and its accessible
 * name, e.g. `button "Log out"`), or a text: an element showing it, a field labelled with
 * it or with it as placeholder, a button or link named by it.
 */
async function elementVisible(page: Page, description: string): Promise<boolean> {
  const byRole = /^\s*([a-z]+)\s+"(.+)"\s*$/i.exec(description);
  const candidates = byRole
    ? [page.getByRole(byRole[1].toLowerCase() as Parameters<Page['getByRole']>[0], { name: byRole[2] })]
    : [page.getByText(description), page.getByLabel(description), page.getByPlaceholder(description), page.getByRole('button', { name: description }), page.getByRole('link', { name: description })];
  for (const locator of candidates) {
    const count = await locator.count().catch(() => 0);
    for (let i = 0; i < Math.min(count, 20); i++) {
      if (await locator.nth(i).isVisible().catch(() => false)) return true;
    }
  }
  return false;
}

/** One model call, apart from the agent's conversation: is the criterion met by the final page and the answer? */
async function judge(step: StepContext, criterion: string, answer: string): Promise<{ met: boolean; reason: string }> {
  const { options, input, signal, spent, mask } = step;
  const page = await observePage(step.session.page, { tokenBudget: JUDGE_PAGE_TOKENS, screenshot: false });
  const content = mask(
    [`Task: ${input.params.prompt}`, `Criterion: ${criterion}`, `The agent's final answer: ${answer || '(none)'}`, `The final page (${step.session.page.url()}):`, page.text].join('\n\n'),
  );
  // The judge's calls are held to the task's dollar budgets like the agent's.
  const budget = await costBudgetOf(step);
  const promptTokens = tokensOf(JUDGE_SYSTEM) + tokensOf(content) + tokensOf(JSON.stringify(VERDICT_TOOL));
  for (let attempt = 0; attempt < 2; attempt++) {
    const maxTokens = affordableOutput(step, budget, promptTokens, 300);
    const reply = await options.llm.complete({ system: JUDGE_SYSTEM, messages: [{ role: 'user', content }], tools: [VERDICT_TOOL], maxTokens, signal });
    spent.inputTokens += reply.usage.inputTokens;
    spent.outputTokens += reply.usage.outputTokens;
    const call = reply.toolCalls.find((c) => c.name === VERDICT_TOOL.name);
    if (!call) continue;
    try {
      const args = JSON.parse(call.arguments) as { met?: unknown; reason?: unknown };
      if (typeof args.met === 'boolean') return { met: args.met, reason: typeof args.reason === 'string' && args.reason.trim() ? clip(args.reason.trim(), 500) : args.met ? 'Met' : 'Not met' };
    } catch {
      /* asked again */
    }
  }
  return { met: false, reason: 'The judge gave no verdict' };
}

/** What the agent is told when the result was not verified. */
export function notVerifiedNote(failed: Verdict[]): string {
  const lines = failed.map((v) => `- ${v.check} ${JSON.stringify(v.value)}: ${v.reason}`);
  return `Not accepted: the result was checked and these checks failed:\n${lines.join('\n')}\nContinue the task until they hold, then call done again.`;
}

/** The task ends: its result did not pass the checks after the agent was told MAX_VERIFY_RETRIES times. */
export function notVerified(verdicts: Verdict[]): TaskFailure {
  const failed = verdicts.filter((v) => !v.passed);
  return new TaskFailure('TASK_NOT_VERIFIED', `The result did not pass ${failed.length} of its ${verdicts.length} checks after ${MAX_VERIFY_RETRIES} tries: ${failed.map((v) => v.check).join(', ')}`, { checks: verdicts });
}

