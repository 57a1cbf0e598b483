/**
 * The acting half of a step: the chosen action through the gate (secrets put in, the policy
 * asked), then the tool, then the report. Everything it reports (to the model, events,
 * logs, the workflow, the recording) is masked.
 */
import type { ActionName } from '../contracts/actions';
import { TaskFailure, endsTaskAtOnce, isServiceError } from '../contracts/errors';
import type { FoundElement } from '../recording/replay';
import type { RecordedStep } from '../contracts/recording';
import type { StepResult, Verification, VerifyCheck } from '../contracts/session-types';
import { MAX_VERIFY_RETRIES, notVerified, notVerifiedNote, runChecks } from './verify';
import { gateAction } from './action-gate';
import { indexOf } from './tools/fields';
import { appearedText, elementName, observedElements, readObservation } from './observe/page-diff';
import { REPEAT_HELD, addedShown, againNote, asksForOne, cartButton, cartButtonNamed, otherItemNote, repeatNote } from './repetition';
import { elementUnderIndex } from './approval-binding';
import { observedIndexes } from './page-bound-tools';
import { reportRefusals } from './policy/navigation-guard';
import { recordStep, recordedArgs, safeUrl } from './record-step';
import { emit, toolContextOf, type AgentStepResult, type StepContext } from './step-context';
import { checkStructuredOutput } from './structured-output';
import { rightToolHint } from './tool-hints';
import { doneObjection, echoedTask, emptyResult, heldJump, roleOf, heldLeave, heldRetype, JUMP_HELD, RETYPE_HELD, trackFilling, unseenFigures, unsentReminder } from './done-check';
import { heldPress } from './submit-check';
import { EARLY_ACTIONS, giveUpNote } from './give-up';
import { PAY_HELD, paysUnasked } from './pay-check';
import { SLOT_HELD, otherSlot } from './slot-check';
import { ELSEWHERE_HELD, LABEL_HELD, misplacedTyping } from './typing-check';
import { ownWords, STATED_HELD, statedAnswer, statedExtreme, taskSendsTo } from './stated-answer';
import { shownInView } from './observe/named-in-view';
import { readLines } from './tools/extract';
import { heldOption, heldSameOption, heldSize, OPTION_HELD, SAME_OPTION_HELD } from './option-check';
import { NO_EARLIER_PAGE } from './tools/go-back';
import { namedToggleSet, SENT_LEAVE_HELD, sentLeaveNote, TOGGLE_HELD, toggleBack, togglesNotNamed } from './toggle-asked';
import { ABSENT_HELD, absentNamed, MISINDEX_HELD, misindexed, MISTYPED_HELD, mistypedInto, NO_PRESS_HELD, pressNotMade, radioGroup, taskRadio, TWIN_HELD, twinOfAdvised, UNNAMED_HELD, unnamedToggle } from './index-check';
import { hasPasswordField, heldQuestion } from './question-check';
import { forgetReloadAsk } from './tools/navigate';
import { LIST_LEAVE_HELD, listPageLeave } from './observe/list-page';
import { HOLDS_BEFORE_ONLY_DONE, ONLY_DONE_NOTE } from './task-memory';
import type { AgentTool, ToolContext, ToolResult } from './types';

/** Failures that end the task at once; any other failed action is reported to the model. */
const MAX_CONSECUTIVE_FAILED_ACTIONS = 3;
/** Failed actions in a row allowed on top of the others once the model was told the right tool. */
const EXTRA_TRIES_AFTER_HINT = 2;
/** A structured result that does not validate is sent back this many times, then the task fails. */
const MAX_OUTPUT_CORRECTIONS = 2;

/** A recorded step that cannot be performed again as recorded: the agent takes over. */
export class ReplayMismatch extends Error {}

/** The action to perform, and what the step has spent to choose it. */
export interface ActionRequest {
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
}

/** The step's result as it is being made. */
type ResultBase = Omit<StepResult, 'kind'> & { cost: number; action: { name: ActionName; target?: string } };

/** An action under way: what it acts on, its result so far, its timings and its recording. */
interface ActionUnderWay {
  toolContext: ToolContext;
  base: ResultBase;
  timings: () => NonNullable<StepResult['timings']>;
  record: (outcome: RecordedStep['outcome'], more?: { error?: string; summary?: string }) => void;
}

/** Performs the chosen action; a failure that does not end the task is reported to the model. */
export async function act(step: StepContext, request: ActionRequest): Promise<AgentStepResult> {
  const action = startAction(step, request);
  try {
    return await perform(step, request, action);
  } catch (err) {
    return failed(step, request, action, err);
  }
}

/** The field input_text types into (and its text) or select_option chooses in (and the option), the element click_element presses, with the observation it was chosen from. */
function noteSet(step: StepContext, request: ActionRequest): void {
  const { memory } = step;
  const args = request.args as { index?: unknown; text?: unknown; value?: unknown; label?: unknown };
  if (memory.lastObservation === undefined || typeof args.index !== 'number') return;
  if (request.tool.name === 'input_text' && typeof args.text === 'string') memory.set.typedInto(memory.lastObservation, args.index, args.text);
  const option = args.value ?? args.label;
  if (request.tool.name === 'select_option' && typeof option === 'string') memory.set.typedInto(memory.lastObservation, args.index, option);
  if (request.tool.name === 'click_element') memory.set.pressed(memory.lastObservation, args.index);
}

function startAction(step: StepContext, request: ActionRequest): ActionUnderWay {
  const { tool } = request;
  const actStart = performance.now();
  const timings = () => ({ observeMs: round(request.observeMs), modelMs: round(request.modelMs), actMs: round(performance.now() - actStart) });
  // The agent's words with this step (masked, clipped): a task stopped later keeps them as its message.
  const said = step.heard.said;
  const base: ResultBase = { usage: request.usage, cost: request.cost, action: { name: tool.name }, ...(said ? { said } : {}) };
  const toolContext = toolContextOf(step);
  // The next observation says what the action changed (0: an action on no element).
  // (a tab's number is not an element's: a switch to tab [1] is no press of element [1])
  step.memory.acted.push(tool.name === 'switch_tab' ? 0 : (indexOf(request.args) ?? 0));
  noteSet(step, request);
  step.memory.held = false;
  toolContext.pinned = request.replay?.pinned;
  toolContext.record = {};
  const urlBefore = toolContext.page.url();
  const by = request.replay ? 'replay' : 'agent';
  const record = (outcome: RecordedStep['outcome'], more: { error?: string; summary?: string } = {}) => {
    const element = toolContext.record?.element;
    const args = recordedArgs(tool, request.args, element !== undefined);
    const reasoning = request.reasoning ? step.mask(request.reasoning) : undefined;
    recordStep(step, { by, action: tool.name, args, element, urlBefore, urlAfter: safeUrl(toolContext), outcome, reasoning, ...more });
  };
  return { toolContext, base, timings, record };
}

async function perform(step: StepContext, request: ActionRequest, action: ActionUnderWay): Promise<AgentStepResult> {
  const { tool, callId } = request;
  const { base, toolContext } = action;
  const gate = await gateAction({ tool, args: request.args, ctx: toolContext, policy: step.memory.policy ?? null, secrets: step.secrets, approved: request.approved });
  if (request.replay && gate.kind !== 'perform') throw new ReplayMismatch(`the automation policy ${gate.kind === 'block' ? 'blocks' : 'asks a human to approve'} it`);
  if (gate.kind === 'block') {
    step.memory.heldInRow = 0;
    action.record('blocked', { error: step.mask(gate.reason) });
    base.timings = action.timings();
    return blocked(step, base, callId, step.mask(gate.reason));
  }
  if (gate.kind === 'approve') return waitForApproval(step, request, action);
  const held = !request.replay && step.options.llm.followsSchemas ? await heldByCheck(step, request, toolContext, gate.args) : undefined;
  if (held) return heldBack(step, request, action, held);
  step.memory.heldInRow = 0;
  const result = await tool.execute(toolContext, gate.args as never);
  if (tool.name !== 'navigate') forgetReloadAsk(toolContext.page);
  base.timings = action.timings();
  if (result.done && result.done.success === false && !request.replay && step.options.llm.followsSchemas && !(await givenUpEarly(step, callId, toolContext))) return { ...base, kind: 'continue' };
  if (result.done && result.done.success !== false && !request.replay && !(await doneStands(step, callId, toolContext, result.done.message, request.reasoning))) return { ...base, kind: 'continue' };
  if (result.done && result.done.success !== false && !(await answerAccepted(step, callId, result.done))) return { ...base, kind: 'continue' };
  if (result.done && result.done.success !== false && step.input.params.verify?.length) {
    const verification = await verifiedAnswer(step, callId, step.input.params.verify, result.done.message);
    if (!verification) return { ...base, kind: 'continue' };
    base.verification = verification;
  }
  return performed(step, request, action, result);
}

/** What holds the action back, for a model that follows the schemas: a press that sends a form with empty fields, a question a human need not answer. */
async function heldByCheck(step: StepContext, request: ActionRequest, toolContext: ToolContext, args: unknown): Promise<string | undefined> {
  if (request.tool.name === 'request_human_input') {
    const asksCredentials = (args as { type?: unknown } | undefined)?.type === 'credentials';
    const signInShown = asksCredentials ? await hasPasswordField(toolContext.page) : true;
    const timesHeld = step.memory.questionsHeld;
    const held = (firstStep: boolean) => heldQuestion(args, step.secrets, timesHeld, signInShown, step.input.params.prompt ?? '', step.memory.typed, firstStep, step.memory.sentWith !== undefined);
    // the lines in view that answer the task before a question asked at the first step
    const note = held(false) ?? answerInView(step, asksCredentials) ?? held(step.input.stepNo === 0);
    if (!note) return undefined;
    step.memory.questionsHeld += 1;
    step.memory.offNextAnswer.add('request_human_input');
    // held again: the lines in view the task asks about, when there are some
    const shown = timesHeld === 1 ? shownInView(step.input.params.prompt ?? '', step.memory.lastObservation ?? '') : undefined;
    return shown ? `${note} This page shows ${shown}: if it answers the task, call done with it.` : note;
  }
  return heldStated(step, request) ?? heldSentLeave(step, request.tool.name, args) ?? heldPlanLeave(step, request.tool.name, args) ?? heldListLeave(step, request.tool.name, args) ?? heldChoice(step, request.tool.name, args) ?? heldSlot(step, request.tool.name, args) ?? heldPay(step, request.tool.name, args) ?? heldRetype(step, request.tool.name, args) ?? heldMisindex(step, request, args) ?? (await heldLeave(step, toolContext.page, request.tool.name, args)) ?? (await heldJump(step, toolContext.page, request.tool.name, args)) ?? heldShown(step, request) ?? (await heldPress(step, toolContext.page, request.tool.name, args)) ?? heldRepeat(step, request.tool.name, args);
}

/**
 * A question to a human (not for credentials) while the page shows the lines the task asks
 * about (named-in-view.ts), held once per task with them: the default model, "Jonas Berg
 * Payroll 2615" quoted to it, asked a human for "the name and extension of the payroll person".
 */
function answerInView(step: StepContext, asksCredentials: boolean): string | undefined {
  if (step.memory.questionsHeld > 0 || asksCredentials) return undefined;
  const shown = shownInView(step.input.params.prompt ?? '', step.memory.lastObservation ?? '');
  return shown ? `Not asked: this page shows ${shown}. If it does not answer the task, call request_human_input again; if it does, call done with it.` : undefined;
}

/** Tools that look elsewhere for what the task asks: held once when the agent's words gave the answer the page shows (stated-answer.ts), and that action left out of the next answer. */
const LOOKS_ELSEWHERE = new Set(['click_element', 'navigate', 'go_back', 'scroll', 'extract', 'switch_tab', 'wait']);

function heldStated(step: StepContext, request: ActionRequest): string | undefined {
  if (step.memory.statedLines.size >= MAX_STATED_HOLDS || !LOOKS_ELSEWHERE.has(request.tool.name)) return undefined;
  const [task, observation] = [step.input.params.prompt ?? '', step.memory.lastObservation ?? ''];
  const index = request.tool.name === 'click_element' ? indexOf(request.args) : undefined;
  const pressed = index === undefined ? undefined : observedElements(observation).find((e) => e.index === index)?.label;
  if (taskSendsTo(task, pressed, observation)) return undefined;
  const words = ownWords(request.reasoning, step.memory.lastHeld);
  const note = statedAnswer(task, words, observation) ?? statedExtreme(task, words, observation, pressed);
  if (!note) return undefined;
  // once per line of the page (the default model, held on a brunch's line of the task's
  // performer on page 1, read the right one on page 3 and went on paging)
  const shown = / and this page shows (.*)\. If it does not answer/.exec(note)?.[1] ?? note;
  if (step.memory.statedLines.has(shown)) return undefined;
  step.memory.statedHeld = true;
  step.memory.statedLines.add(shown);
  // not offered in the next answer: signed in, the answer quoted back, the default model pressed "Log out" again at once;
  // nor the page's other links (its number shown and quoted back, the default model pressed "Send a message", then the home link)
  offNextAnswer(step.memory, request.tool.name, index);
  for (const link of observedElements(observation).filter((e) => e.role === 'link')) step.memory.pressesOffNextAnswer.add(link.index);
  return note;
}

/** Holds of an action away from a page that shows the answer the agent's words gave, a task at most. */
const MAX_STATED_HOLDS = 2;

/** The held action left out of the next answer: the press of that element, or that tool (switch_tab, scroll…). */
function offNextAnswer(memory: StepContext['memory'], tool: string, index: number | undefined): void {
  if (index !== undefined) memory.pressesOffNextAnswer.add(index);
  else memory.offNextAnswer.add(tool);
}

/** How a held leave of a page that shows what the task asks begins. */
export const SHOWN_HELD = 'Not done yet: this page shows';
/** Tools that leave the page in view (or another tab's): held once when it shows what the task asks about. */
const LEAVES = new Set(['click_element', 'navigate', 'go_back', 'switch_tab']);

/**
 * A leave of a page whose text shows the lines the task asks about (named-in-view.ts): held
 * once per task, with them. The default model, signed in, "Valid until 14 April 2027" in view
 * and quoted to it, wrote that it would read the date and pressed "Log out".
 */
function heldShown(step: StepContext, request: ActionRequest): string | undefined {
  const { memory } = step;
  // (not after a hold that quoted the page's lines or said it is shown whole: the agent's stated answer, a name no element has, a question, a jump)
  if (memory.shownHeld || memory.statedHeld || memory.questionsHeld > 0 || memory.jumpHeld || memory.misindexHeld.has('absent') || !LEAVES.has(request.tool.name)) return undefined;
  const index = request.tool.name === 'click_element' ? indexOf(request.args) : undefined;
  // a press the notes tell to make, or of a field's own part (a toggle, an option), is not a leave
  if (index !== undefined && (memory.advisedPresses.has(index) || !['link', 'button'].includes(roleOf(memory.lastObservation, index) ?? ''))) return undefined;
  const shown = shownInView(step.input.params.prompt ?? '', memory.lastObservation ?? '');
  if (!shown && !memory.extremePage) return undefined;
  memory.shownHeld = true;
  // not offered in the next answer: the price in view and quoted, the default model switched tabs at once, and on until its time ran out
  offNextAnswer(memory, request.tool.name, index);
  const again = index === undefined ? `call ${request.tool.name} again` : `press [${index}] again`;
  // the cheapest one's own page: the default model, told so, pressed the site's logo and searched again until its time ran out
  if (!shown) return `${SHOWN_HELD} ${memory.extremePage}: it is the page of the one the task asks for. If the task asks for something else, ${again}; if it asks what this page shows (its seller, its details), call done with it now.`;
  return `${SHOWN_HELD} ${shown}, which the task asks about. If it does not answer the task, ${again}; if it does, call done with it now.`;
}

/** A press of another element than the one the agent's words name, held once per pair; of a toggle neither the task nor the words name while the task names another, once per toggle (index-check.ts). */
function heldMisindex(step: StepContext, request: ActionRequest, args: unknown): string | undefined {
  const index = indexOf(args);
  const unpressed = pressNotMade(request.reasoning, step.memory.lastObservation ?? '', request.tool.name);
  if (unpressed && !step.memory.misindexHeld.has(`unpressed ${request.tool.name}>${unpressed.meant}`)) {
    step.memory.misindexHeld.add(`unpressed ${request.tool.name}>${unpressed.meant}`);
    return unpressed.note;
  }
  if (request.tool.name === 'input_text' && index !== undefined) return heldMistyped(step, request, index);
  if (request.tool.name !== 'click_element' || index === undefined || step.memory.advisedPresses.has(index)) return undefined;
  const observation = step.memory.lastObservation ?? '';
  const twin = step.memory.misindexHeld.has(`twin ${index}`) ? undefined : twinOfAdvised(step.memory.advisedPresses, observation, index);
  if (twin) {
    step.memory.misindexHeld.add(`twin ${index}`);
    return twin;
  }
  const held = misindexed(request.reasoning, observation, index, step.input.params.prompt ?? '');
  if (held && !step.memory.misindexHeld.has(`${index}>${held.meant}`)) {
    step.memory.misindexHeld.add(`${index}>${held.meant}`);
    // the one named was just held as a second press that adds again: not offered again
    const meantLine = readObservation(observation).elements.get(held.meant);
    if (meantLine && step.memory.repeatsHeld.has(elementName(meantLine))) {
      return `${MISINDEX_HELD} "${meantLine.replace(/^\s*\[\d+\] \S+ "((?:[^"\\]|\\.)*)".*$/, '$1')}" [${held.meant}], which you pressed already: a second press adds again. If the task asks for one, it is done: call done. [${index}] is another element; if it is what you meant, press [${index}] again.`;
    }
    // not pressed in the next answer: told the index of "Log in", the default model pressed "Join" again at once
    step.memory.pressesOffNextAnswer.add(index);
    return held.note;
  }
  if (held) return undefined;
  if (!step.memory.misindexHeld.has('absent')) {
    const absent = absentNamed(request.reasoning, observation, index);
    if (absent) {
      step.memory.misindexHeld.add('absent');
      return absent;
    }
  }
  if (!step.memory.misindexHeld.has(`back ${index}`)) {
    const back = toggleBack(step.input.params.prompt ?? '', observation, index);
    if (back) {
      step.memory.misindexHeld.add(`back ${index}`);
      step.memory.pressesOffNextAnswer.add(index);
      return back;
    }
  }
  // held once, and once more while the toggle or radio the task names is set as it asks (the
  // default model, "Personalised ads" unticked and said so, pressed "Face grouping" two answers
  // later; "Standard" chosen, it pressed "Basic" and "Standard" in turn for 18 steps)
  const prompt = step.input.params.prompt ?? '';
  const again = step.memory.misindexHeld.has(`toggle ${index}`);
  const radio = taskRadio(prompt, observation, index);
  if (again && (step.memory.misindexHeld.has(`toggle again ${index}`) || !(namedToggleSet(prompt, observation) || radio?.checked))) return undefined;
  const unnamed = unnamedToggle(prompt, request.reasoning, observation, index);
  if (unnamed) {
    step.memory.misindexHeld.add(again ? `toggle again ${index}` : `toggle ${index}`);
    // none of the toggles (nor the radios of its group) the task does not name pressed in the next answer: told, the default model pressed another
    const radios = radio ? [...radioGroup(observation, index)].filter((other) => other !== radio.index) : [];
    for (const other of [index, ...togglesNotNamed(prompt, observation), ...radios]) step.memory.pressesOffNextAnswer.add(other);
  }
  return unnamed;
}

/** A press of a button that pays or buys, the task asking for neither: held once per element (pay-check.ts). */
function heldPay(step: StepContext, tool: string, args: unknown): string | undefined {
  return heldPressOnce(step, tool, args, 'pay', (task, observation, index) => {
    const note = paysUnasked(task, observation, index);
    return note === undefined ? undefined : { note, away: [] };
  });
}

/** A press of a time slot or day other than the task's: held once per element, and left out of the next answer (slot-check.ts). */
function heldSlot(step: StepContext, tool: string, args: unknown): string | undefined {
  return heldPressOnce(step, tool, args, 'slot', (task, observation, index) => {
    const note = otherSlot(task, observation, index);
    return note === undefined ? undefined : { note, away: [index] };
  });
}

/**
 * A press held once per element and kind: `check` gives the note to answer with and the
 * presses left out of the next answer, or undefined to let the press run.
 */
function heldPressOnce(step: StepContext, tool: string, args: unknown, kind: string, check: (task: string, observation: string, index: number) => { note: string; away: readonly number[] } | undefined): string | undefined {
  const index = indexOf(args);
  if (tool !== 'click_element' || index === undefined || step.memory.misindexHeld.has(`${kind} ${index}`)) return undefined;
  const held = check(step.input.params.prompt ?? '', step.memory.lastObservation ?? '', index);
  if (!held) return undefined;
  step.memory.misindexHeld.add(`${kind} ${index}`);
  for (const away of held.away) step.memory.pressesOffNextAnswer.add(away);
  return held.note;
}

/** A typing into another field than the one the agent's words name: held once per pair (index-check.ts); of a value that belongs elsewhere, once per field and text (typing-check.ts). */
function heldMistyped(step: StepContext, request: ActionRequest, index: number): string | undefined {
  const text = (request.args as { text?: unknown }).text;
  const held = mistypedInto(request.reasoning, step.memory.lastObservation ?? '', index, typeof text === 'string' ? text : undefined);
  if (held && !step.memory.misindexHeld.has(`type ${index}>${held.meant}`)) {
    step.memory.misindexHeld.add(`type ${index}>${held.meant}`);
    // (held once: not again for the same text as a value of another field)
    step.memory.misindexHeld.add(`typed ${index}:${String(text)}`);
    return held.note;
  }
  if (typeof text !== 'string' || step.memory.misindexHeld.has(`typed ${index}:${text}`)) return undefined;
  const misplaced = misplacedTyping(step.input.params.prompt ?? '', step.memory.lastObservation ?? '', index, text, step.secrets?.catalogue() ?? []);
  if (misplaced) step.memory.misindexHeld.add(`typed ${index}:${text}`);
  return misplaced;
}

/** A choice of an option while another of its list holds more of the task's words: held once per option (option-check.ts). */
function heldChoice(step: StepContext, tool: string, args: unknown): string | undefined {
  const task = step.input.params.prompt ?? '';
  const observation = step.memory.lastObservation ?? '';
  const same = heldSameOption(observation, tool, args);
  if (same && !step.memory.misindexHeld.has(`same option ${same.key}`)) {
    step.memory.misindexHeld.add(`same option ${same.key}`);
    return same.note;
  }
  const held = heldOption(task, observation, tool, args) ?? heldSize(task, observation, tool, args);
  if (!held || step.memory.misindexHeld.has(`option ${held.key}`)) return undefined;
  step.memory.misindexHeld.add(`option ${held.key}`);
  return held.note;
}

/** A leave of the page a form was just sent to (by a link only when with the toggles the task names as it asks): held once per task (toggle-asked.ts). */
function heldSentLeave(step: StepContext, tool: string, args: unknown): string | undefined {
  const { memory } = step;
  if (memory.sentWith === undefined || memory.sentLeaveHeld) return undefined;
  const index = indexOf(args);
  const role = index === undefined ? undefined : roleOf(memory.lastObservation, index);
  const note = sentLeaveNote(memory.sentWith, tool, role, index);
  if (note) memory.sentLeaveHeld = true;
  return note;
}

/** How a held leave of a page whose fields the task gives values for begins. */
export const PLAN_LEAVE_HELD = "Not pressed yet: the task gives what this page's fields take";

/**
 * A link pressed or a go_back while the latest observation said what the page's fields take
 * and none is typed yet, held once per task: told to type the card number and PIN into the
 * sign-in page's fields, the default model pressed the site's home link, wandered for four
 * steps and asked its human for them.
 */
function heldPlanLeave(step: StepContext, tool: string, args: unknown): string | undefined {
  const { memory } = step;
  if (memory.planLeaveHeld || !memory.fillPlan || memory.unsubmitted.length) return undefined;
  const index = indexOf(args);
  const link = tool === 'click_element' && index !== undefined && roleOf(memory.lastObservation, index) === 'link';
  if (!link && tool !== 'go_back') return undefined;
  memory.planLeaveHeld = true;
  const plan = memory.fillPlan;
  if (!link) return `${PLAN_LEAVE_HELD}: ${plan}; going back leaves them. Do that first, then send the form; to go back anyway, call go_back again.`;
  return `${PLAN_LEAVE_HELD}: ${plan}; [${index!}] is a link that leaves them. Do that first, then send the form; to follow the link anyway, press [${index!}] again.`;
}

/** A pager's press away from the page of the list the task asks about, held once per element (list-page.ts). */
function heldListLeave(step: StepContext, tool: string, args: unknown): string | undefined {
  return heldPressOnce(step, tool, args, 'list', listPageLeave);
}

/**
 * A second press in a row of a button that adds or buys, the page changed by the first: held
 * once per button; in a task that asks for one, a cart button pressed already, or one the
 * task does not name while it names another, held unless pressed again right after its hold
 * (repetition.ts).
 */
function heldRepeat(step: StepContext, tool: string, args: unknown): string | undefined {
  const { memory } = step;
  const index = indexOf(args);
  const now = memory.lastObservation ?? '';
  const line = tool === 'click_element' && index !== undefined ? readObservation(now).elements.get(index) : undefined;
  if (!line) return undefined;
  const element = elementName(line);
  const cart = heldCartPress(step, index!, line, element);
  if (cart !== null) return cart;
  const before = memory.presses.pressedBefore(tool, element, now);
  if (before === undefined || memory.repeatsHeld.has(element)) return undefined;
  const note = repeatNote(line, index!, appearedText(before, now)[0]);
  if (!note) return undefined;
  memory.repeatsHeld.add(element);
  memory.pressesOffNextAnswer.add(index!);
  return note;
}

/** A press of a cart button in a task that asks for one: the hold's note, undefined to press it, null when it is no such press. */
function heldCartPress(step: StepContext, index: number, line: string, element: string): string | undefined | null {
  const { memory } = step;
  const label = cartButton(line);
  const task = step.input.params.prompt ?? '';
  if (!label || !asksForOne(task)) return null;
  const now = memory.lastObservation ?? '';
  const insists = memory.cartHeld?.element === element && memory.cartHeld.at === step.input.stepNo - 1;
  const named = cartButtonNamed(task, observedElements(now));
  // pressed before, and the page said since that something went into the cart
  const earlier = memory.cartPresses.get(element);
  const added = earlier !== undefined && addedShown(appearedText(earlier, now));
  // pressed at the step before: said with what the page shows now
  const before = memory.presses.pressedBefore('click_element', element, now);
  const again = before !== undefined ? repeatNote(line, index, appearedText(before, now)[0]) : againNote(index, label);
  const note = insists ? undefined : added ? again : !earlier && named && named.index !== index ? otherItemNote({ index, label }, named) : undefined;
  if (note) {
    memory.cartHeld = { element, at: step.input.stepNo };
    memory.repeatsHeld.add(element);
    memory.pressesOffNextAnswer.add(index);
    return note;
  }
  memory.cartPresses.set(element, now);
  return undefined;
}

/** An action held back (submit-check.ts, question-check.ts): not performed, the model told why, an action list stopped there. */
function heldBack(step: StepContext, request: ActionRequest, action: ActionUnderWay, note: string): AgentStepResult {
  const { base } = action;
  base.timings = action.timings();
  step.memory.answerCall(request.callId, step.mask(note));
  step.memory.held = true;
  step.memory.lastHeld = note;
  step.memory.heldInRow += 1;
  if (step.memory.heldInRow === HOLDS_BEFORE_ONLY_DONE) step.memory.notes.push(ONLY_DONE_NOTE);
  const reason = heldReason(request.tool.name, note);
  base.action.target = `held: ${reason}`;
  emit(step, { type: 'action', taskId: step.input.taskId, data: { name: request.tool.name, refused: true, reason } });
  step.log.info({ action: request.tool.name, reason }, 'action held back');
  return { ...base, kind: 'continue' };
}

/** How a held note begins, and the reason the `action` event gives. */
const HELD_REASONS: [string, string][] = [
  [STATED_HELD, 'the agent gave the answer the page shows'],
  [SHOWN_HELD, 'the page shows what the task asks'],
  [REPEAT_HELD, 'pressed at the step before, it would add again'],
  [MISTYPED_HELD, 'the agent named another field'],
  [ELSEWHERE_HELD, 'the task gives it for another field'],
  [LABEL_HELD, 'it is a label of the page, not a value'],
  [RETYPE_HELD, 'the field holds it already'],
  [JUMP_HELD, 'the page is shown whole already'],
  [TOGGLE_HELD, 'it is already as the task asks'],
  [SENT_LEAVE_HELD, 'the form was sent, and the page it opened needs nothing more'],
  [OPTION_HELD, 'another option fits the task better'],
  [SAME_OPTION_HELD, 'the list holds that option already'],
  [SLOT_HELD, 'the task names another day or time'],
  [PAY_HELD, 'the task asks for no payment'],
  [MISINDEX_HELD, 'the agent named another element'],
  [ABSENT_HELD, 'the agent named another element'],
  [NO_PRESS_HELD, 'the agent named an element to press'],
  [UNNAMED_HELD, 'the task names another element'],
  [TWIN_HELD, 'a note named another element of that name'],
  [PLAN_LEAVE_HELD, "the task gives what this page's fields take"],
  [LIST_LEAVE_HELD, 'the list shows the page the task asks about'],
];

/** Why an action was held, for watchers: by the note's opening words (a held question, a held leave, else a form with empty fields). */
export function heldReason(tool: string, note: string): string {
  const known = HELD_REASONS.find(([start]) => note.startsWith(start))?.[1];
  if (known) return known;
  if (tool === 'request_human_input') return 'the agent can do or read it itself';
  if (tool === 'navigate' || note.includes('a link that may leave the page')) return 'the form filled was not sent';
  return 'the form it sends has empty fields';
}

/** A blocked action: not performed, the model told why, watchers told by an action event. */
function blocked(step: StepContext, base: ResultBase, callId: string, reason: string): AgentStepResult {
  const { input, memory, log } = step;
  memory.answerCall(
    callId,
    `Not performed: the automation policy blocks this action (${reason}). Find another way to do the task that the policy allows, or call done with success=false if there is none.`,
  );
  base.action.target = `blocked: ${reason}`;
  emit(step, { type: 'action', taskId: input.taskId, data: { name: base.action.name, blocked: true, reason } });
  log.info({ action: base.action.name, reason }, 'agent action blocked by the policy');
  const failures = memory.actionFailed();
  if (failures >= MAX_CONSECUTIVE_FAILED_ACTIONS) {
    // Thrown inside perform: failed() takes it as a failed action too (counted once more, its message wrapped).
    throw new TaskFailure('POLICY_BLOCKED', `The agent tried ${failures} actions in a row that the policy blocks; the last: ${base.action.name} (${reason})`);
  }
  return { ...base, kind: 'continue' };
}

/**
 * An action the policy wants approved: the task waits for the human, the element under its
 * index remembered. The question is made again between two readings of that element: what
 * the human is asked about is the element remembered, or nothing is asked (a page that moves
 * its marker meanwhile gets the action refused, and the model looks again).
 */
async function waitForApproval(step: StepContext, request: ActionRequest, action: ActionUnderWay): Promise<AgentStepResult> {
  const { base, toolContext } = action;
  const { tool } = request;
  const element = await elementUnderIndex(toolContext, request.args);
  const gate = await gateAction({ tool, args: request.args, ctx: toolContext, policy: step.memory.policy ?? null, secrets: step.secrets });
  const still = element ? await elementUnderIndex(toolContext, request.args) : undefined;
  base.timings = action.timings();
  if (gate.kind !== 'approve' || (element && still?.identity !== element.identity)) {
    const now = still ? `it is now ${still.shown}` : 'it is no longer on the page';
    const changed = element ? `the element [${element.index}] changed while the action was checked (it was ${element.shown}; ${now})` : 'the page changed while the action was checked';
    step.memory.answerCall(request.callId, step.mask(`Not performed: ${changed}. Look at the page again and ask again if the action is still needed.`));
    emit(step, { type: 'action', taskId: step.input.taskId, data: { name: tool.name, refused: true, reason: 'the element changed while the action was checked' } });
    step.log.info({ action: tool.name }, 'action not performed: its element changed while it was checked');
    base.action.target = 'element changed';
    return { ...base, kind: 'continue' };
  }
  step.memory.awaitApproval({ callId: request.callId, tool: tool.name, args: request.args, element });
  base.action.target = 'waiting for approval';
  step.log.info({ action: tool.name, reason: step.mask(gate.reason) }, 'agent action waits for approval');
  return { ...base, kind: 'human_input', humanInput: { type: 'approval_needed', value: step.mask(gate.request) } };
}

/**
 * A give-up after few actions, answered once per task with what the whole page shows of what
 * the task asks, or the element likeliest to lead on (give-up.ts); true when it stands. The
 * default model gave up at its first step on a question a line below the viewport answered.
 */
async function givenUpEarly(step: StepContext, callId: string, toolContext: ToolContext): Promise<boolean> {
  const { memory } = step;
  // the steps before this one (a step is one model answer)
  const actions = step.input.stepNo;
  if (memory.giveUpHeld || actions > EARLY_ACTIONS) return true;
  memory.giveUpHeld = true;
  const task = step.input.params.prompt ?? '';
  // (what the page shows in view was said by the observation's note already)
  const whole = await readLines(toolContext).catch(() => [] as string[]);
  const found = whole.length ? shownInView(task, `Visible text:\n${whole.join('\n')}`) : undefined;
  const shown = found !== shownInView(task, memory.lastObservation ?? '') ? found : undefined;
  const note = giveUpNote(task, memory.lastObservation ?? '', actions, shown);
  memory.answerCall(callId, step.mask(note));
  // told the answer's line, done stays offered
  if (!shown) memory.offNextAnswer.add('done');
  step.log.info({ actions }, 'early give-up answered');
  return false;
}

/** A done that claims success, held once for a press held and not made since, once for an answer that repeats the task or a result that holds nothing while the page shows a table, once against the amounts the task's pages held and once against what the page shows (done-check.ts). */
async function doneStands(step: StepContext, callId: string, toolContext: ToolContext, answer: unknown, words: string | undefined): Promise<boolean> {
  const text = typeof answer === 'string' ? answer : JSON.stringify(answer ?? '');
  // a press held for its form's empty fields first: told only that its answer repeated the
  // task, the default model pressed a link, then sent the form with the e-mail field empty
  const heldFirst = step.memory.heldForm && !step.memory.heldFormQuestioned ? await doneObjection(step, toolContext) : undefined;
  const echo = heldFirst ? undefined : (echoedTask(step, text, words) ?? emptyResult(step, text));
  const objection = heldFirst ?? echo ?? unseenFigures(step, text) ?? (await doneObjection(step, toolContext));
  if (!objection) return true;
  step.memory.answerCall(callId, step.mask(objection));
  // Neither done nor a question at the next answer: the default model, its done answered,
  // asked a human to do what the objection named. (Done stays after an echo or an empty
  // result: what it needs is another done; without it, the default model pressed "Log out".)
  if (!echo) step.memory.offNextAnswer.add('done');
  step.memory.offNextAnswer.add('request_human_input');
  // a form left unsent: its button is the one press of the next answer (the default model, told
  // to press "Add to bag", pressed the size it had chosen, then called done again)
  const send = /\bPress \[(\d+)\] to send it\b/.exec(objection)?.[1];
  if (send) for (const e of observedElements(step.memory.lastObservation ?? '')) if (e.index !== Number(send)) step.memory.pressesOffNextAnswer.add(e.index);
  step.log.info({ objection: step.mask(objection) }, 'done answered with what the page shows');
  return false;
}

/**
 * The task's answer checked against the requested format: accepted, `done.message` becomes
 * the checked answer; refused, the model is told what is wrong (a few times, then the task fails).
 */
async function answerAccepted(step: StepContext, callId: string, done: NonNullable<ToolResult['done']>): Promise<boolean> {
  const checked = await checkStructuredOutput(step.input.params, done.message);
  if (checked.ok) {
    done.message = checked.value;
    return true;
  }
  const corrections = step.memory.outputRefused();
  if (corrections > MAX_OUTPUT_CORRECTIONS) {
    throw new TaskFailure('INVALID_STRUCTURED_OUTPUT', `The result did not match the requested format after ${MAX_OUTPUT_CORRECTIONS} corrections: ${checked.error}`);
  }
  step.memory.answerCall(callId, step.mask(`Not accepted: ${checked.error} Call done again with a corrected answer.`));
  step.log.info({ error: step.mask(checked.error), corrections }, 'structured output refused');
  return false;
}

/**
 * The answer's verify checks on the final page: all passed, the verification goes with the
 * done; some failed, the model is told which and goes on (MAX_VERIFY_RETRIES times, then the
 * task fails with TASK_NOT_VERIFIED and the verdicts).
 */
async function verifiedAnswer(step: StepContext, callId: string, checks: VerifyCheck[], answer: string): Promise<Verification | undefined> {
  const { memory, log, mask } = step;
  const checksRun = await runChecks(step, checks, answer);
  const failed = checksRun.filter((v) => !v.passed);
  if (!failed.length) return { passed: true, attempts: memory.verificationFailures() + 1, checks: checksRun };
  const failures = memory.verificationFailed();
  log.info({ failed: failed.map((v) => v.check), failures }, 'the result did not pass its checks');
  emit(step, { type: 'agent', taskId: step.input.taskId, content: mask(`The result was checked: ${failed.length} of ${checksRun.length} checks failed (${failed.map((v) => v.check).join(', ')}).`) });
  if (failures > MAX_VERIFY_RETRIES) throw notVerified(checksRun);
  memory.answerCall(callId, mask(notVerifiedNote(failed)));
  return undefined;
}

/** A performed action reported: to the model, the recording, watchers, the log and the workflow. */
async function performed(step: StepContext, request: ActionRequest, action: ActionUnderWay, result: ToolResult): Promise<AgentStepResult> {
  const { input, memory, mask, log } = step;
  const { tool, callId, replay } = request;
  const { base } = action;
  memory.actionSucceeded();
  countPress(step, tool.name, request.args);
  if (tool.name === 'click_element' && indexOf(request.args) !== undefined) memory.pressedNow.push(indexOf(request.args)!);
  if (tool.name === 'extract') memory.extracted = result.summary;
  trackFilling(step, tool.name, request.args, result);
  const note = (await reportRefusals(memory.guard, action.toolContext.page)) + (result.unchanged ? await unsentReminder(step, action.toolContext.page) : '');
  const summary = mask(`${request.approved ? 'Approved by the human. ' : ''}${result.summary}${note}`);
  if (!replay) memory.answerCall(callId, summary, true);
  action.record('ok', { summary });
  const target = result.target === undefined ? undefined : mask(result.target);
  base.action.target = target;
  // In a replay, each action says whether the recording or the agent performed it.
  const performedBy = replay ? 'replayed' : 'agent';
  emit(step, { type: 'action', taskId: input.taskId, data: { name: tool.name, target, ...(input.params.replay ? { by: performedBy } : {}) } });
  log.info({ action: tool.name, target, by: performedBy }, 'agent action');
  if (replay) base.replayed = true;
  if (result.done) return { ...base, kind: 'done', message: mask(result.done.message), success: result.done.success };
  if (result.humanInput) return { ...base, kind: 'human_input', humanInput: { type: result.humanInput.type, value: mask(result.humanInput.value) } };
  return { ...base, kind: 'continue' };
}

/** A failed action: fatal failures and replay mismatches go up; any other is told to the model, until too many in a row. */
async function failed(step: StepContext, request: ActionRequest, action: ActionUnderWay, err: unknown): Promise<AgentStepResult> {
  const { session, memory, signal, log, mask } = step;
  const { tool } = request;
  if (signal.aborted) throw err;
  if (session.crashed) throw new TaskFailure('PAGE_CRASH', 'The browser page crashed');
  if (isServiceError(err) && endsTaskAtOnce(err.code)) throw err;
  const notFound = isServiceError(err) && err.code === 'ELEMENT_NOT_FOUND';
  const reason = mask(`${err instanceof Error ? err.message.split('\n')[0] : String(err)}${notFound ? indexesHint(memory.lastObservation) : ''}`);
  if (err instanceof ReplayMismatch) throw err;
  action.record('failed', { error: reason });
  if (request.replay) throw new ReplayMismatch(`it failed: ${reason}`);
  action.base.timings = action.timings();
  const failures = memory.actionFailed();
  const code = isServiceError(err) ? err.code : 'ACTION_FAILED';
  const hint = rightToolHint(tool.name, request.args, reason, memory.lastObservation);
  // Told the right tool, the model gets a few more tries before the task ends.
  if (hint) memory.toldRightTool = true;
  // a tab with no earlier page: go_back is not offered while it shows this address (the
  // default model, told so, went back three more times)
  if (tool.name === 'go_back' && reason.includes(NO_EARLIER_PAGE)) memory.noEarlierPageAt = session.page.url();
  memory.answerCall(request.callId, `Action failed: ${reason}${hint ? `${/[.!?]$/.test(reason) ? '' : '.'} ${mask(hint)}` : ''}`);
  log.info({ action: tool.name, reason, failures }, 'agent action failed');
  if (failures >= MAX_CONSECUTIVE_FAILED_ACTIONS + (memory.toldRightTool ? EXTRA_TRIES_AFTER_HINT : 0)) {
    throw new TaskFailure(code, `Action ${tool.name} failed ${failures} times in a row: ${reason}`);
  }
  return { ...action.base, kind: 'continue' };
}

/** A press of an element counted with the element's line in the observation it was chosen from. */
function countPress(step: StepContext, tool: string, args: unknown): void {
  const { memory } = step;
  const index = indexOf(args);
  const line = index === undefined ? undefined : readObservation(memory.lastObservation ?? '').elements.get(index);
  const element = line ? elementName(line) : '';
  const count = memory.presses.note(tool, args, element, memory.lastObservation ?? '');
  memory.turns.note(tool, element, readObservation(memory.lastObservation ?? '').url);
  // Pressed twice in a row, the page changed each time: a model that follows the schemas does
  // something else before it may press it a third time (the default model added seven mugs for one).
  if (count >= 2 && tool === 'click_element' && index !== undefined && step.options.llm.followsSchemas) memory.pressesOffNextAnswer.add(index);
}

/** For an index that is not on the page: which ones the latest observation offers. */
export function indexesHint(observation: string | undefined): string {
  const indexes = observedIndexes(observation ?? '');
  if (!indexes.length) return '. The latest observation lists no elements: scroll, wait or navigate first.';
  const shown = indexes.length <= 12 ? indexes.map((index) => `[${index}]`).join(', ') : `[${Math.min(...indexes)}] to [${Math.max(...indexes)}] (${indexes.length} elements)`;
  return `. Use an index of the latest observation: ${shown}.`;
}

const round = (ms: number) => Math.round(ms * 10) / 10;
