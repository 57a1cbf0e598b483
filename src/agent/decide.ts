/**
 * The deciding half of a step: the page observed within the context budget, then the model
 * asked for one action, within the task's token budgets, until it gives a valid one (a few
 * attempts at most).
 */
import { typingFirst } from './list-order';
import { TaskFailure } from '../contracts/errors';
import { observationBudget, tokensOf } from './context-budget';
import { allowCall, tighterBudget, type CostBudget } from './cost-budget';
import { computeCost, priceOf } from './llm/pricing';
import { roundUsd as round6 } from '../contracts/money';
import type { LlmClient, LlmToolCall, LlmToolSpec } from './llm/types';
import { observePage } from './observe/observe';
import { appearedText, changeSummary, elementName, nothingVisible, observedElements, pageWithoutPlace, readObservation } from './observe/page-diff';
import { formBackNote, formRefusedNote, formSentNote, formShownAgain, refusalLine, roleOf, stillNamed } from './done-check';
import { namedInExtractNote, namedInViewNote } from './observe/named-in-view';
import { formPlan, formPlanSentence } from './form-plan';
import { dateInViewNote, timeInViewNote } from './observe/date-in-view';
import { extremeOpenedNote, priceExtreme, searchFirstNote } from './observe/price-extreme';
import { pressNote, turnNote } from './repetition';
import { sizeNote } from './option-check';
import { revealedAnswerNote } from './revealed-answer';
import { listPage, listPageNote } from './observe/list-page';
import { radioToChooseNote, toggleSetNote, togglesSetAsAsked } from './toggle-asked';
import { saveButton, taskRadio } from './index-check';
import { activeTab, boundToPage, navigateNeeded, replacingTyping, tabsTitled, unavailable, uselessOn } from './page-bound-tools';
import { backAndForthNote } from './back-and-forth';
import { systemPrompt, taskReminder } from './prompts';
import { clipWords, emit, type StepContext } from './step-context';
import { toolNamed, toolSpecs } from './tools';
import { doneSpec } from './tools/done';
import type { AgentTool } from './types';
import { HOLDS_BEFORE_ONLY_DONE, type ListedAction } from './task-memory';

const MAX_BAD_REPLIES = 3;
const MAX_OUTPUT_PER_CALL = 4096;

/** The action the model chose, and where the step's time went. */
export interface Decision {
  tool: AgentTool;
  args: unknown;
  call: LlmToolCall;
  /** The model's words that came with the call. */
  reasoning?: string;
  /** The actions the answer listed after this one, in their order. */
  rest: ListedAction[];
  /** The observation the model chose it from. */
  pageText: string;
  observeMs: number;
  modelMs: number;
}

/** What every model call of the step sends besides the conversation. */
interface PromptFrame {
  system: string;
  /** The system prompt and the tools: the same for every call of this step. */
  fixedTokens: number;
}

type Reply = Awaited<ReturnType<LlmClient['complete']>>;

/** Observes the page and asks the model for the step's action. */
export async function decide(step: StepContext): Promise<Decision> {
  const { memory } = step;
  const observeStart = performance.now();
  const system = systemPrompt(memory.policy ? memory.policy.llmRole : undefined);
  const frame: PromptFrame = { system, fixedTokens: tokensOf(system) + tokensOf(JSON.stringify(offeredTools(step))) };
  const pageText = await observe(step, frame);
  const observeMs = performance.now() - observeStart;
  const choice = await chooseAction(step, frame, pageText, await costBudgetOf(step));
  memory.answerOnly = false;
  return { ...choice, pageText, observeMs };
}

/** The tools the model may call: only done when the task only needs its answer. */
function offeredTools(step: StepContext): LlmToolSpec[] {
  const { memory, input } = step;
  return memory.answerOnly ? [doneSpec(input.params)] : (memory.specs ??= toolSpecs(input.params));
}

/** The page, within what the context leaves for it, added to the conversation; the history fitted to the context. */
async function observe(step: StepContext, frame: PromptFrame): Promise<string> {
  const { input, memory, options } = step;
  const prompt = memory.currentTaskPrompt();
  const tokenBudget = observationBudget(options.contextTokens, frame.fixedTokens + (prompt ? tokensOf(prompt.content) : 0), options.observationTokenBudget);
  const observation = await observePage(step.session.page, { tokenBudget, screenshot: options.vision });
  memory.observationBudget = tokenBudget;
  // What the last actions changed closes the observation, after the page it speaks of, then the task.
  memory.pages.moved(memory.lastObservation, observation.text, memory.acted.at(-1) ?? 0);
  const lines = whatChanged(memory, observation.text, input.params.prompt ?? '');
  const loop = memory.pages.loop(observation.text);
  if (loop) lines.push(backAndForthNote(loop));
  // (the size or radio the task asks for and not chosen yet: the note of what was set names no button to press next)
  const size = sizeNote(input.params.prompt ?? '', observation.text);
  const radio = radioToChooseNote(input.params.prompt ?? '', observation.text);
  const toggled = memory.acted.length ? toggleSetNote(input.params.prompt ?? '', observation.text, memory.acted, Boolean(size || radio)) : undefined;
  if (toggled) lines.push(toggled);
  const revealed = memory.acted.length && memory.lastObservation !== undefined ? revealedAnswerNote(input.params.prompt ?? '', memory.lastObservation, observation.text) : undefined;
  if (revealed) lines.push(revealed);
  const extreme = pricesNote(memory, input.params.prompt ?? '', observation.text);
  if (extreme) lines.push(extreme);
  // (on another page of a list than the task names, no line of it is offered as the answer)
  const listAt = listPage(input.params.prompt ?? '', observation.text);
  if (listAt) lines.push(listPageNote(listAt));
  const elsewhere = listAt !== undefined && listAt.shown !== listAt.asked;
  const named = elsewhere ? undefined : (namedInViewNote(input.params.prompt ?? '', observation.text) ?? (memory.extracted ? namedInExtractNote(input.params.prompt ?? '', memory.extracted) : undefined));
  memory.extracted = undefined;
  if (named) lines.push(named);
  const plan = formPlan(input.params.prompt ?? '', observation.text, step.secrets?.catalogue() ?? []);
  memory.fillPlan = plan?.words;
  const toFill = plan && formPlanSentence(plan);
  if (toFill) lines.push(toFill);
  if (size) lines.push(size);
  if (radio) lines.push(radio);
  for (const when of [dateInViewNote(input.params.prompt ?? '', observation.text), timeInViewNote(input.params.prompt ?? '', observation.text)]) if (when) lines.push(when);
  // what the notes tell to press is not held for the agent's words (the date note's "Later
  // dates" was held because the thought named the time slot "19:30")
  memory.advisedPresses = new Set([...lines.join('\n').matchAll(/\bpress \[(\d+)\]/gi)].map((m) => Number(m[1])));
  // a note, or a press that changed nothing, is something to weigh before the next actions (not
  // the fields the task fills: that note says what to do)
  if (lines.some((line) => line !== toFill && (!line.startsWith('Changed:') || nothingVisible(line)))) memory.feedback = true;
  if (input.stepNo > 0) lines.push(taskReminder(input.params.prompt));
  const closing = lines.map((line) => `\n${line}`).join('');
  memory.addObservation(observation.text, step.mask(`Observation (step ${input.stepNo + 1}):\n${observation.text}${closing}`), observation.screenshot);
  memory.fitToContext(options.contextTokens, frame.fixedTokens);
  return observation.text;
}

/** The cheapest (most expensive) line of the page, or the page opened from the line named so, or where to search first (price-extreme.ts). */
function pricesNote(memory: StepContext['memory'], task: string, now: string): string | undefined {
  const extreme = priceExtreme(task, now);
  const before = memory.extremeNamed;
  memory.extremeNamed = extreme?.named;
  if (extreme) return extreme.note;
  const opened = before && memory.lastObservation !== undefined && readObservation(memory.lastObservation).url !== readObservation(now).url;
  const openedNote = opened ? extremeOpenedNote(before, now) : undefined;
  // (a leave of that page is held once: act.ts)
  memory.extremePage = openedNote ? `${before!.amount}, the ${before!.end} price of the page before` : undefined;
  return openedNote ?? searchFirstNote(task, now);
}

/** What the actions since the last observation changed, and the notes kept for this observation. */
function whatChanged(memory: StepContext['memory'], now: string, task: string): string[] {
  const before = memory.lastObservation;
  if (before === undefined || !memory.acted.length) return [...memory.notes];
  const lines = [changeSummary(before, now, memory.acted)];
  const sent = memory.pressedAfterFilling && readObservation(before).url !== readObservation(now).url;
  const back = sent ? formShownAgain(before, now, new Set(memory.typedInto.keys())) : [];
  // '' for a form sent with no toggles the task names; kept while the page it opened stays (a
  // question held there, then a go_back: the default model left it and filled the form again)
  const stayed = readObservation(before).url === readObservation(now).url;
  memory.sentWith = sent && !back.length ? (togglesSetAsAsked(task, before) ?? '') : stayed ? memory.sentWith : undefined;
  // a button's press that led to another page, which turns down what was sent (nothing typed
  // needed: the terms box of a sign-up was left unticked)
  const leftByButton = readObservation(before).url !== readObservation(now).url && memory.pressedNow.some((index) => roleOf(before, index) === 'button');
  const refused = (sent || leftByButton) && !back.length ? refusalLine(before, now) : undefined;
  if (refused) memory.refusal = { url: readObservation(now).url, line: refused };
  if (refused) lines.push(formRefusedNote(refused));
  else if (sent) lines.push(back.length ? formBackNote(back) : formSentNote(memory.sentWith || undefined, stillNamed(task, now)));
  memory.pressedAfterFilling = false;
  const presses = memory.presses;
  // a press that changed nothing visible ends the count (a link to a part of the page already
  // shown, pressed again, was said to have changed the page each time)
  // (and the elements pressed are not offered again while the page looks the same: the
  // default model pressed a time slot already chosen nine times)
  if (nothingVisible(lines[0])) {
    presses.reset();
    if (memory.pressedNow.length) memory.idlePresses = idleAfter(memory.idlePresses, pageWithoutPlace(now), memory.pressedNow);
    // a switch to a tab that shows the same page: the tab left is not offered while it looks the
    // same (the default model switched between two tabs of the price list for 14 steps)
    const left = activeTab(before);
    if (left !== undefined && activeTab(now) !== undefined && left !== activeTab(now)) memory.sameTabs = idleAfter(memory.sameTabs, pageOfTabs(now), [left]);
  }
  else if (presses.count >= 2) lines.push(pressNote(presses.element, presses.count, appearedText(before, now)[0]));
  // two elements pressed in turn: neither offered at the next answer
  const turn = memory.turns.inTurn();
  if (turn) {
    const elements = observedElements(now);
    const pair = elements.filter((e) => turn.some((t) => elementName(e.line) === t));
    // two radios of a group the task names one of: that one, and the button that sends it
    const asked = pair[0]?.role === 'radio' ? taskRadio(task, now, pair[0].index) : undefined;
    lines.push(turnNote(turn, elements, asked, asked && saveButton(now, task)));
    for (const e of pair) if (!(asked && !asked.checked && e.index === asked.index)) memory.pressesOffNextAnswer.add(e.index);
  }
  return [...lines, ...memory.notes];
}

/** The page as a tab shows it, whichever tab is active: its #part and which tab is active left out. */
function pageOfTabs(text: string): string {
  return pageWithoutPlace(text).replace(/^Tabs: .*$/m, (line) => line.replace(' (active)', ''));
}

/** The presses (or tabs) that changed nothing visible on `page`, those of earlier steps on it kept. */
function idleAfter(idle: { page: string; indexes: number[] } | undefined, page: string, pressed: number[]): { page: string; indexes: number[] } {
  const kept = idle?.page === page ? idle.indexes : [];
  return { page, indexes: [...new Set([...kept, ...pressed])] };
}

/** Asks the model until it calls one tool with valid arguments. */
async function chooseAction(step: StepContext, frame: PromptFrame, pageText: string, budget: CostBudget | undefined): Promise<Omit<Decision, 'pageText' | 'observeMs'>> {
  let modelMs = 0;
  for (let attempt = 0; ; attempt++) {
    if (attempt >= MAX_BAD_REPLIES) {
      throw new TaskFailure('LLM_INVALID_RESPONSE', `The model did not produce a valid action after ${MAX_BAD_REPLIES} attempts`);
    }
    const { reply, callMs } = await callModel(step, frame, pageText, budget);
    modelMs += callMs;
    const chosen = readReply(step, reply, attempt);
    if (chosen) {
      step.memory.spent.chosen(chosen.tool.name, pageText);
      return { ...chosen, modelMs };
    }
  }
}

/** The dollar budget the step's calls are held to: the task's maxCost, the owner's daily limit or balance, or none. */
export async function costBudgetOf(step: StepContext): Promise<CostBudget | undefined> {
  const { input, options } = step;
  const maxCost = input.params.maxCost;
  const own = maxCost !== undefined && input.remaining.cost !== undefined ? { maxCost, left: input.remaining.cost } : undefined;
  const left = options.spending ? await options.spending.left(input.userId, input.taskId) : undefined;
  const uncharged = Math.max(0, (input.spentCost ?? 0) - (left?.taskCharged ?? 0));
  return tighterBudget(own, left?.daily, uncharged, left?.balance);
}

const BUDGET_WORDS: Record<CostBudget['kind'], (limit: number) => string> = {
  maxCost: (limit) => `the task's maxCost of $${limit}`,
  dailyLimit: (limit) => `the daily spending limit of $${limit}`,
  balance: (limit) => `the account balance of $${limit}`,
};

/** The output tokens a call may produce with what the dollar budget leaves; the task ends before a call that would pass it. */
export function affordableOutput(step: StepContext, budget: CostBudget | undefined, promptTokens: number, maxTokens: number): number {
  if (!budget) return maxTokens;
  const { llm, prices } = step.options;
  const left = budget.left - computeCost(step.spent, llm.model, prices);
  const allowance = allowCall(left, priceOf(llm.model, prices), promptTokens, maxTokens);
  if (allowance.ok) return allowance.maxTokens;
  const what = BUDGET_WORDS[budget.kind](budget.limit);
  throw new TaskFailure('TASK_BUDGET_EXCEEDED', `The next model call (about $${allowance.estimatedCost}) would pass ${what}; $${Math.max(0, round6(left))} is left`, {
    budget: budget.kind,
    limit: budget.limit,
    left: Math.max(0, round6(left)),
    estimatedCallCost: allowance.estimatedCost,
  });
}


/** One model call, within what the task's token and dollar budgets leave, and how long it took. */
async function callModel(step: StepContext, frame: PromptFrame, pageText: string, budget: CostBudget | undefined): Promise<{ reply: Reply; callMs: number }> {
  const { input, memory, options, signal } = step;
  const usage = step.spent;
  const estimate = memory.estimatedTokens() + frame.fixedTokens;
  if (estimate > input.remaining.inputTokens - usage.inputTokens) {
    throw new TaskFailure('TOKEN_BUDGET_EXCEEDED', 'The next model call would exceed maxInputTokens', {
      remainingInputTokens: input.remaining.inputTokens - usage.inputTokens,
      estimatedInputTokens: estimate,
    });
  }
  const tokenCap = Math.min(MAX_OUTPUT_PER_CALL, input.remaining.outputTokens - usage.outputTokens);
  if (tokenCap < 16) throw new TaskFailure('TOKEN_BUDGET_EXCEEDED', 'maxOutputTokens is used up', { remainingOutputTokens: tokenCap });
  const maxTokens = affordableOutput(step, budget, estimate, tokenCap);
  const callStart = performance.now();
  let reply: Reply;
  try {
    const offered = offeredTools(step);
    const tools = options.llm.followsSchemas ? forThisPage(memory, offered, pageText, input.params.prompt ?? '') : offered;
    reply = await options.llm.complete({ system: frame.system, messages: memory.messages, tools, maxTokens, brief: !memory.feedback, signal });
  } catch (err) {
    // A call cut off by the cancellation was sent all the same: its prompt counts at the estimate.
    if (signal.aborted) usage.inputTokens += estimate;
    throw err;
  }
  return { reply, callMs: performance.now() - callStart };
}

/**
 * The reply's tokens added to the step's, the reply to the conversation; its first tool call
 * with valid arguments and the valid calls after it (done only as the last), or undefined
 * (the model is told what was wrong). Every call not taken is answered with why.
 */
function readReply(step: StepContext, reply: Reply, attempt: number): Pick<Decision, 'tool' | 'args' | 'call' | 'reasoning' | 'rest'> | undefined {
  const { input, memory } = step;
  step.spent.inputTokens += reply.usage.inputTokens;
  step.spent.outputTokens += reply.usage.outputTokens;
  memory.addModelReply(reply.text, reply.toolCalls);
  if (reply.text.trim()) {
    const said = step.mask(reply.text.trim());
    emit(step, { type: 'agent', taskId: input.taskId, content: said });
    step.heard.said = clipWords(said);
  }
  if (!reply.toolCalls.length) {
    memory.tell('You must answer with a tool call. Call done when the task is complete.');
    return undefined;
  }
  const listed = readCalls(step, reply.toolCalls);
  if (!listed.length) {
    step.log.warn({ tool: reply.toolCalls[0].name, attempt }, 'model gave invalid tool arguments');
    return undefined;
  }
  const [first, ...rest] = listed;
  return { tool: first.tool, args: first.args, call: reply.toolCalls[0], rest, reasoning: reply.text.trim() || undefined };
}

/** The calls of a reply as actions, in their order, up to the first invalid one and up to done. */
function readCalls(step: StepContext, calls: LlmToolCall[]): ListedAction[] {
  const { memory } = step;
  const listed: ListedAction[] = [];
  let stop: string | undefined;
  for (const call of calls) {
    if (stop) {
      memory.answerCall(call.id, `Not performed: ${stop}`);
      continue;
    }
    const tool = toolNamed(call.name);
    const parsed = tool ? parseArgs(tool, call.arguments) : { ok: false as const, error: `Unknown tool "${call.name}".` };
    if (!parsed.ok) {
      memory.answerCall(call.id, `Invalid call: ${parsed.error} Call a tool again with valid arguments.`);
      stop = `${call.name} before it was invalid.`;
      continue;
    }
    if (tool!.name === 'done' && call !== calls[calls.length - 1]) {
      memory.answerCall(call.id, 'Not performed: done may only be the last action of a list.');
      stop = 'done before it was not the last action of the list.';
      continue;
    }
    listed.push({ tool: tool!, args: parsed.value, callId: call.id });
  }
  return typingFirst(memory, listed);
}

function parseArgs(tool: AgentTool, raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return { ok: false, error: `Arguments of ${tool.name} are not valid JSON.` };
  }
  const result = tool.schema.safeParse(json);
  if (!result.success) {
    return { ok: false, error: `Arguments of ${tool.name} do not match its schema: ${result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}.` };
  }
  return { ok: true, value: result.data };
}

/**
 * What a model whose answers follow the schemas may choose on this page: elements bound to
 * those listed (less those a click cannot change, and the fields and boxes still as the agent set them), and unavailable the tools that cannot do
 * anything here, navigate when the task names no address and the tab shows a page
 * (page-bound-tools.ts), go_back and the tabs of the other page when it goes back and forth
 * between two, the page tools already performed on this unchanged page, the one it
 * keeps repeating on it, done (request_human_input) just after a done (a question) was
 * answered with what stands against it, and the button whose press was just held (its form
 * not as the task says): told what to fill, the default model pressed it again at once.
 */
function forThisPage(memory: StepContext['memory'], offered: LlmToolSpec[], pageText: string, task: string): LlmToolSpec[] {
  const off = [...uselessOn(pageText), ...memory.spent.on(pageText)];
  if (!navigateNeeded(task, pageText)) off.push('navigate');
  const repeating = memory.repetition.repeating(pageText);
  if (repeating) off.push(repeating);
  const loop = memory.pages.loop(pageText);
  if (loop || (memory.noEarlierPageAt !== undefined && readObservation(pageText).url === memory.noEarlierPageAt)) off.push('go_back');
  const offOnce = [...memory.offNextAnswer];
  memory.offNextAnswer.clear();
  off.push(...offOnce);
  // held again and again: done, the way out every hold names, is what is left (and a question a person must answer)
  if (memory.heldInRow >= HOLDS_BEFORE_ONLY_DONE) off.push(...offered.map((spec) => spec.name).filter((name) => name !== 'done' && name !== 'request_human_input'));
  const notNow = [...memory.pressesOffNextAnswer];
  memory.pressesOffNextAnswer.clear();
  const pressedInVain = memory.idlePresses?.page === pageWithoutPlace(pageText) ? memory.idlePresses.indexes : [];
  const idle = [...(loop?.leadBack.map((e) => e.index) ?? []), ...notNow, ...pressedInVain];
  const sameTabs = memory.sameTabs?.page === pageOfTabs(pageText) ? memory.sameTabs.indexes.filter((tab) => tab !== activeTab(pageText)) : [];
  const tabsOff = [...(loop ? tabsTitled(pageText, loop.otherTitle) : []), ...sameTabs];
  const tools = unavailable(replacingTyping(boundToPage(offered, pageText, { filled: memory.set.filled(pageText), toggled: memory.set.toggledBoxes(pageText), unpressed: idle, tabsOff }), task), off);
  // Told what stands against its done, the model acts once more before it may call done again.
  if (!offOnce.includes('done') || !tools.some((spec) => spec.name !== 'done' && choosable(spec))) return tools;
  return tools.map((spec) => (spec.name === 'done' ? { ...spec, parameters: { ...spec.parameters, not: {} } } : spec));
}

/** A tool the model can still call: not made unavailable, and with an element to name when it names one. */
function choosable(spec: LlmToolSpec): boolean {
  const parameters = spec.parameters as { not?: unknown; properties?: { index?: { enum?: unknown[] } } };
  return parameters.not === undefined && parameters.properties?.index?.enum?.length !== 0;
}
