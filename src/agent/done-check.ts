/**
 * A done that claims success is held against the page once: a form the agent filled and
 * never sent, or an error shown next to a field, is said to the model, which may call done
 * again (then it is accepted).
 */
import { STARTING_PAGE } from './prompts';
import type { Page } from 'playwright-core';
import { INDEX_ATTRIBUTE } from '../browser/page-elements';
import type { StepContext } from './step-context';
import type { ToolContext, ToolResult } from './types';
import { choicesShown, heldFormObjection, isSearchField, optionsNamed, unchosenFields } from './submit-check';
import { namedFields, refusedFields } from './tools/refused-form';
import { emptyTextFields, untypedValues } from './task-values';
import { planFields, planWords } from './form-plan';
import { normalizeUrl, withoutHash } from './tools/navigate';
import { listPage, listPageObjection } from './observe/list-page';
import { appearedText, hasState, observedElements, readObservation, VALUE_HINT } from './observe/page-diff';

/** Actions that fill a field, and actions after which a filled form counts as sent. */
const FILLS = new Set(['input_text', 'select_option', 'upload_file']);
const SENDS = new Set(['click_element', 'navigate', 'go_back', 'switch_tab']);
/** At most this many texts typed are kept in a task (task-values.ts looks for the task's values among them). */
const MAX_TYPED = 200;

export interface UnsentForm {
  fields: number[];
  button: string;
  press?: number;
}

interface FormState {
  /** Filled fields of a form still on the page, its submit button's text and index (when it has one). */
  unsent?: UnsentForm;
  /** Error messages shown at fields. */
  errors: string[];
}

/** Controls a click fills in (as the observation names their role), rather than sends. */
const CLICKED_FIELDS = new Set(['radio', 'checkbox', 'switch', 'option', 'menuitemradio', 'menuitemcheckbox']);
/** Fields a click only focuses or opens: it neither fills nor sends their form. */
const FOCUSED_FIELDS = new Set(['textbox', 'searchbox', 'select', 'file', 'combobox', 'spinbutton', 'slider']);

/** The role the latest observation gives element `index`. */
export function roleOf(observation: string | undefined, index: number): string | undefined {
  return new RegExp(`^\\s*\\[${index}\\] (\\S+)`, 'm').exec(observation ?? '')?.[1];
}

/** Keeps track of the fields filled (a radio or checkbox clicked too) since the last other click, Enter or navigation. */
export function trackFilling(step: StepContext, tool: string, args: unknown, result: ToolResult): void {
  const { memory } = step;
  // Said, not done (a navigate to the page the tab shows): the form is as it was.
  if (result.unchanged) return;
  const index = (args as { index?: unknown }).index;
  const given = args as { text?: unknown; value?: unknown; label?: unknown };
  for (const text of [given.text, given.value, given.label]) if (FILLS.has(tool) && typeof text === 'string' && text && memory.typed.length < MAX_TYPED) memory.typed.push(text);
  if (tool === 'input_text' && typeof index === 'number' && typeof given.text === 'string') memory.typedInto.set(index, given.text);
  const role = tool === 'click_element' && typeof index === 'number' ? (roleOf(memory.lastObservation, index) ?? '') : '';
  // (a field a click focuses, or a button of the form that does not send it: "Later dates")
  if (FOCUSED_FIELDS.has(role) || result.formPress === 'plain') return;
  const clickedField = CLICKED_FIELDS.has(role) || result.formPress === 'pressed';
  if ((FILLS.has(tool) || clickedField) && typeof index === 'number') {
    settleHeld(memory, index);
    if (!memory.unsubmitted.includes(index)) memory.unsubmitted.push(index);
    memory.formTouched = true;
  } else if (SENDS.has(tool) || (tool === 'send_keys' && /enter/i.test(String((args as { keys?: unknown }).keys)))) {
    // (a link leaves the form unsent: told it was sent, the default model answered from the page the link opened)
    // (nor is a search sent the task's end: told "if the task asks for nothing more, call done"
    // on the results, the default model may answer from them before it opens the one asked for)
    const searched = memory.unsubmitted.every((field) => isSearchField(memory.lastObservation ?? '', field));
    memory.pressedAfterFilling = memory.unsubmitted.length > 0 && !searched && tool !== 'navigate' && tool !== 'go_back' && role !== 'link';
    memory.unsubmitted = [];
    memory.heldForm = undefined;
  }
}

/**
 * A field of the press held back, filled or chosen since, no longer stands against it: a done
 * is then answered with the form as it is, not with the hold's words. The default model typed
 * Lyon after its Save was held for the city on Paris, and was told the city held Paris.
 */
function settleHeld(memory: StepContext['memory'], index: number): void {
  const held = memory.heldForm;
  if (!held) return;
  held.empty = held.empty.filter((field) => field.index !== index);
  held.unchosen = held.unchosen.filter((field) => field.index !== index && field.named.index !== index);
  if (held.plan) held.plan = held.plan.filter((value) => value.index !== index);
  if (!held.empty.length && !held.unchosen.length) memory.heldForm = undefined;
}

/**
 * The text fields filled before a press that the page after it shows again, empty, by the same
 * name: the form came back (a login refused). Told "the form you filled was sent … call done"
 * on the login page again with "The e-mail address and password do not match", the default
 * model wrote it had logged in.
 */
export function formShownAgain(before: string, now: string, typedInto: ReadonlySet<number>): string[] {
  const field = /^\s*\[(\d+)\] (textbox|searchbox|combobox) "((?:[^"\\]|\\.)*)"(.*)$/gm;
  const filled = new Set([...before.matchAll(field)].filter((m) => typedInto.has(Number(m[1])) || / value="/.test(m[4])).map((m) => `${m[2]} ${m[3]}`));
  return [...now.matchAll(field)].filter((m) => /\bempty\b/.test(m[4]) && filled.has(`${m[2]} ${m[3]}`)).map((m) => `"${m[3]}"`);
}

/** Said instead of the sent note when the form came back with the fields empty again. */
export const formBackNote = (fields: string[]) =>
  `Note: the form was sent, but this page shows it again with ${fields.join(', ')} empty: read what the page says (a refusal, a field it asks for); fill the fields again with what the task gives, then send it.`;

/** A line of a page that turns a sent form down: what it must have, what is required, what failed. */
const REFUSAL = /\b(?:you must|must be (?:accepted|checked|ticked|filled|given|chosen|selected)|(?:is|are) required|required field|please (?:accept|agree|enter|fill|select|choose|provide|tick|check|confirm)|(?:was|were|is|are) not (?:accepted|sent|saved|valid)|could not|couldn't|failed|invalid)\b/i;

/**
 * The line of the page a form's press led to that turns the form down (among the lines that
 * appeared), or undefined. The default model pressed "Continue" with the terms box unticked,
 * was told the form was sent, and called done on a page that said "You must accept the terms of
 * service."
 */
export function refusalLine(before: string, now: string): string | undefined {
  return appearedText(before, now).find((line) => line.length <= 160 && REFUSAL.test(line) && !FORM_HINT.test(line));
}

/** A form's standing hint, not a refusal: "Fields marked * are required", "All fields are required". */
const FORM_HINT = /\bmarked\b|\*|\ball fields\b|\boptional\b/i;

/** Said with the observation when the page a sent form (or a button's press) led to turns it down (refusalLine). */
export const formRefusedNote = (line: string) =>
  `Note: this page answers "${line}": the site did not take what was sent. Go back to the form (go_back), do what this page asks, then send it again.`;

/**
 * Said with the observation after a press that sent what the agent filled and led to another
 * page (with the toggles the task names, when set as it asks). When the new page shows what
 * the task still names (`named`: an option not chosen, a button), those, and no done: told
 * "if the task asks for nothing more, call done" on the second step of a checkout, the
 * default model called done with Express shipping not chosen and "Place order" not pressed.
 */
export const formSentNote = (sentWith?: string, named: string[] = []) =>
  named.length
    ? `Note: the form you filled was sent${sentWith ? ` with ${sentWith}, as the task asks,` : ''} and a new page opened, which shows what the task still names: ${named.join(', ')}.`
    : `Note: the form you filled was sent${sentWith ? ` with ${sentWith}, as the task asks,` : ''} and a new page opened: if the task asks for nothing more, call done.`;

/**
 * The elements of a page that the task names and the agent has still to act on: a radio or
 * option not chosen that it names (optionsNamed), a button every word of whose label (of three
 * letters or more) it says ("Place order" for "place the order").
 */
export function stillNamed(task: string, observation: string): string[] {
  const elements = observedElements(observation);
  const taskWords = new Set(task.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  const choices = elements.filter((e) => e.role === 'radio' || e.role === 'option');
  const options = optionsNamed(task, choices.map((e) => ({ text: e.label, index: e.index }))).map((o) => o.index);
  const named = elements.filter((e) => {
    if (e.role === 'radio' || e.role === 'option') return options.includes(e.index) && !hasState(e.line, ['checked', 'selected']);
    const words = e.label.toLowerCase().match(/[\p{L}]{3,}/gu) ?? [];
    return e.role === 'button' && words.length > 0 && words.every((w) => taskWords.has(w));
  });
  return named.slice(0, 3).map((e) => `[${e.index}] ${e.role} "${e.label}"`);
}

/**
 * A done whose answer repeats the task's own words (its first sentence, or the whole of a
 * short task) for a task that asks to be told something, or only the prompt's line about the
 * starting page, said once per task: the default model answered "Until when is my Pulse
 * Fitness membership valid? Log in with …", and "The browser is already on the starting page
 * of the task. The observation shows it." for a task without a "?".
 */
export function echoedTask(step: StepContext, answer: string, words?: string): string | undefined {
  const { memory } = step;
  const prompt = step.input.params.prompt ?? '';
  if (memory.echoQuestioned) return undefined;
  const squeeze = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
  const first = squeeze(/^[^.?!\n]*[.?!]?/.exec(prompt.trim())?.[0] ?? '');
  const echo = (first.length >= 20 && squeeze(answer).includes(first)) || wordsOfTask(squeeze(answer), squeeze(`${prompt} ${STARTING_PAGE}`));
  if (!(echo && /\?/.test(prompt)) && !wordsOfTask(squeeze(answer), squeeze(STARTING_PAGE))) return undefined;
  memory.echoQuestioned = true;
  // what its own words quote from the page: the default model wrote "The page shows 'Valid
  // until 14 April 2027' which is the answer", and answered with the task's words twice
  const quoted = quotedFromPage(words ?? '', memory.lastObservation ?? '');
  if (quoted) return `Not accepted yet: your answer repeats the task's words, and your own words say the page shows "${quoted}". Call done with the answer itself as its message (what the page shows that answers the task); if the answer is right as it is, call done again.`;
  return 'Not accepted yet: your answer repeats the task\'s words. Answer with what the page shows that answers it (find it first if no page showed it); if the answer is right as it is, call done again.';
}

/** An answer of at least this many words… */
const MIN_ECHO_WORDS = 6;

/**
 * …every one of them a word of the task or of what the task's message says of its start: the
 * default model answered "The reviewer called Helga K. was unhappy with the Ironclad skillet.
 * The browser is already on the starting page of the task: the observation shows it."
 */
function wordsOfTask(answer: string, task: string): boolean {
  const words = answer.split(' ').filter(Boolean);
  const known = new Set(task.split(' '));
  return words.length >= MIN_ECHO_WORDS && words.every((word) => known.has(word) || ['the', 'a', 'an', 'is', 'was', 'it'].includes(word));
}

/** The first text the words quote ('…' or "…", 4 to 120 characters) that a line of the page's text holds. */
export function quotedFromPage(words: string, observation: string): string | undefined {
  const at = observation.indexOf('\nVisible text:\n');
  if (at < 0) return undefined;
  const text = observation.slice(at).toLowerCase();
  for (const m of words.matchAll(/'([^'\n]{4,120})'|"([^"\n]{4,120})"|‘([^’\n]{4,120})’|“([^”\n]{4,120})”/g)) {
    const quote = (m[1] ?? m[2] ?? m[3] ?? m[4]).trim();
    if (text.includes(quote.toLowerCase())) return quote;
  }
  return undefined;
}

/**
 * Amounts of a done's answer that no page, tool result or the prompt of the task held, said
 * once per task (a sum the agent made is accepted when it calls done again).
 */
export function unseenFigures(step: StepContext, answer: string): string | undefined {
  const { memory } = step;
  if (memory.figuresQuestioned) return undefined;
  memory.figures.saw(step.input.params.prompt ?? '');
  const unseen = memory.figures.unseen(answer);
  const misplaced = unseen.length ? undefined : memory.figures.misplaced(answer);
  if (misplaced) {
    memory.figuresQuestioned = true;
    return `Not accepted yet: "${misplaced.amount}" is on the line "${misplaced.line}", not on a line of "${misplaced.item}". Find the line of ${misplaced.item} first (scroll to load more, or open the page that holds it); if the answer is right as it is, call done again.`;
  }
  if (!unseen.length) return undefined;
  memory.figuresQuestioned = true;
  const amounts = unseen.map((amount) => `"${amount}"`).join(', ');
  return `Not accepted yet: ${amounts} ${unseen.length > 1 ? 'are' : 'is'} on no page you saw in this task. Answer with what a page shows: find it first (scroll, or open the page that holds it); if the answer is right as it is, call done again.`;
}

/** Whether a structured answer holds nothing: no figure, no flag, no text but blanks, in lists and objects however deep. */
export function hollow(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.every(hollow);
  if (typeof value === 'object') return Object.values(value).every(hollow);
  return false;
}

/** Lines of a page's text that read as a table's: two or more of the same number of cells (header and a row at least). */
export function tableLines(observation: string): string[] {
  const lines = readObservation(observation).text.filter((line) => line.includes(' | '));
  const cells = (line: string) => line.split(' | ').length;
  const counts = new Map<number, number>();
  for (const line of lines) counts.set(cells(line), (counts.get(cells(line)) ?? 0) + 1);
  const [width, many] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [0, 0];
  return many >= 2 ? lines.filter((line) => cells(line) === width) : [];
}

/**
 * A done whose JSON result is hollow (`{"people": []}`) while the page in view shows a table's
 * rows, said once per task. The default model, asked for the name and city of everyone on a
 * team directory of three rows, called done with an empty list after reading the rows twice.
 */
export function emptyResult(step: StepContext, answer: string): string | undefined {
  const { memory } = step;
  if (memory.emptyQuestioned) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(answer);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || !hollow(value)) return undefined;
  const rows = tableLines(memory.lastObservation ?? '');
  if (!rows.length) return undefined;
  memory.emptyQuestioned = true;
  const shown = rows.slice(0, 3).map((line) => `"${line}"`).join(', ');
  return `Not accepted yet: your result holds nothing, and this page shows ${rows.length} lines of a table: ${shown}${rows.length > 3 ? ', …' : ''}. Fill the result from its rows and call done with it; if the result is right empty, call done again.`;
}

/** At most this many empty fields are named. */
const MAX_EMPTY_NAMED = 3;

/**
 * A done while the task gives values (a phone number, an e-mail address, a quoted text) that
 * were never typed nor are on the page, and the page shows an empty field: said once per task.
 */
function untypedObjection(step: StepContext): string | undefined {
  const { memory } = step;
  if (memory.untypedQuestioned || memory.doneQuestioned) return undefined;
  const observation = memory.lastObservation ?? '';
  const empty = emptyTextFields(observation);
  if (!empty.length) return undefined;
  const values = untypedValues(step.input.params.prompt ?? '', memory.typed, observation);
  if (!values.length) return undefined;
  // (the form filled after it may still go unsent: that is said once more; told to type the
  // phone number, the default model typed it and called done with the form unsent)
  memory.untypedQuestioned = true;
  const fields = empty.slice(0, MAX_EMPTY_NAMED).map((field) => `[${field.index}] "${field.label}"`).join(', ');
  const one = values.length === 1;
  return `Not accepted yet: the task gives ${values.map((value) => `"${value}"`).join(', ')}, which you have not typed, and the page shows ${fields} empty. Type ${one ? 'it' : 'them'} into the field ${one ? 'it belongs' : 'they belong'} to (input_text), then send the form; if the task is complete as it is, call done again.`;
}

/** What the page shows against a done (or a press held back and not made since), said once per task; undefined when nothing stands against it. */
export async function doneObjection(step: StepContext, ctx: ToolContext): Promise<string | undefined> {
  const { memory } = step;
  // Said once, apart from the objections below: filled after it, the form may still go unsent.
  if (!memory.heldFormQuestioned && memory.heldForm) {
    memory.heldFormQuestioned = true;
    return heldFormObjection(memory.heldForm);
  }
  const onPage = memory.doneQuestioned || !memory.formTouched ? undefined : await formObjection(step, ctx);
  return onPage ?? untypedObjection(step) ?? refusedObjection(step) ?? stillNamedObjection(step) ?? listPageObjectionOnce(step);
}

/** A done on the page that turned the sent form down (formRefusedNote), said once per task. */
function refusedObjection(step: StepContext): string | undefined {
  const { memory } = step;
  const refusal = memory.refusal;
  if (!refusal || memory.refusalQuestioned || readObservation(memory.lastObservation ?? '').url !== refusal.url) return undefined;
  memory.refusalQuestioned = true;
  return `Not accepted yet: this page answers "${refusal.line}": the site did not take what was sent. Go back to the form (go_back), do what the page asks and send it again; if the task is complete as it is, call done again.`;
}

/** A done on another page of a list than the one the task names ("the second page"), said once per task. */
function listPageObjectionOnce(step: StepContext): string | undefined {
  const { memory } = step;
  if (memory.listPageQuestioned) return undefined;
  const at = listPage(step.input.params.prompt ?? '', memory.lastObservation ?? '');
  if (!at || at.shown === at.asked) return undefined;
  memory.listPageQuestioned = true;
  return listPageObjection(at);
}

/**
 * A done while the page shows what the task still names, said once per task: a list on
 * another option than the one the task names, and on the page a form's send opened, an option
 * not chosen or a button every word of which the task says. The default model, told so by the
 * observation's note, called the two-step checkout done on its second step, Express not chosen
 * and "Place order" not pressed; asked for prices in Swiss francs, it called done with "the
 * prices are already shown in Euro".
 */
function stillNamedObjection(step: StepContext): string | undefined {
  const { memory } = step;
  if (memory.stillNamedQuestioned) return undefined;
  const [task, observation] = [step.input.params.prompt ?? '', memory.lastObservation ?? ''];
  const lists = unchosenFields(task, choicesShown(observation)).map((f) => `[${f.index}] "${f.label}" on "${f.current}" while the task says "${f.named.text}"`);
  const named = [...lists, ...(memory.sentWith === undefined ? [] : stillNamed(task, observation))];
  if (!named.length) return undefined;
  memory.stillNamedQuestioned = true;
  const sent = memory.sentWith === undefined ? '' : 'the form you filled was sent, and ';
  return `Not accepted yet: ${sent}this page shows what the task still names: ${named.join(', ')}. Choose or press ${named.length > 1 ? 'them' : 'it'} first; if the task is complete as it is, call done again.`;
}

/** The form the agent filled, unsent, and what the page and the browser show against its fields; said once per task. */
async function formObjection(step: StepContext, ctx: ToolContext): Promise<string | undefined> {
  const { memory } = step;
  const state = await formState(ctx.page, memory.unsubmitted);
  if (!state) return undefined;
  const said: string[] = [];
  if (state.unsent) {
    said.push(unsentWords(state.unsent));
  }
  if (state.errors.length) said.push(`the page shows ${state.errors.map((error) => `"${error}"`).join(', ')} at a field`);
  // The browser's own refusal of a field (after a press of its form's submit) is a bubble outside the page's text.
  const refused = await refusedFields(ctx.page.mainFrame(), null, ctx.signal);
  if (refused.length) said.push(`the browser refuses ${namedFields(refused)}, so the form was not sent`);
  if (!said.length) return undefined;
  memory.doneQuestioned = true;
  // Only unsent, with its button known: the press spelled out (told to "finish what the task
  // needs", the default model asked a human to sign it in on the page it had signed in to).
  const next = said.length === 1 && state.unsent?.press !== undefined ? `Press [${state.unsent.press}] to send it, or if the task is complete as it is` : 'Finish what the task needs, or if it is complete as it is';
  return `Not accepted yet: ${said.join('; and ')}. ${next}, call done again.`;
}

/** `you filled [1], [2] but the form was not sent (its button [3] "Send" was not pressed)` */
function unsentWords(unsent: UnsentForm): string {
  const fields = unsent.fields.map((index) => `[${index}]`).join(', ');
  const button = unsent.press === undefined ? `"${unsent.button}"` : `[${unsent.press}] "${unsent.button}"`;
  return `you filled ${fields} but the form was not sent${unsent.button ? ` (its button ${button} was not pressed)` : ''}`;
}

/**
 * Said with an action that left the page as it was (a navigate to the page the tab shows, a
 * switch to the active tab) while fields the agent filled are in a form not sent: ` You
 * filled [3] but the form was not sent (its button [4] "Call me back" was not pressed): press
 * [4] to send it.` The default model typed the phone number, then "navigated to the next
 * step" on the same page and called the callback done unsent.
 */
export async function unsentReminder(step: StepContext, page: Page): Promise<string> {
  const { memory } = step;
  if (!memory.unsubmitted.length) return '';
  const state = await formState(page, memory.unsubmitted);
  if (!state?.unsent) return '';
  const words = unsentWords(state.unsent);
  const press = state.unsent.press === undefined ? '' : `: press [${state.unsent.press}] to send it`;
  return ` You ${words.slice('you '.length)}${press}.`;
}

/**
 * A navigate away from a form the agent filled and did not send, or a press of a link outside
 * it, held once per task: the default model typed a username and password, then opened a
 * profile address it guessed, which lost both; it typed an e-mail and a password, then pressed
 * the link "Not a member yet? Join".
 */
export async function heldLeave(step: StepContext, page: Page, tool: string, args: unknown): Promise<string | undefined> {
  const { memory } = step;
  if (memory.leaveHeld || !memory.unsubmitted.length) return undefined;
  const index = (args as { index?: unknown }).index;
  const link = tool === 'click_element' && typeof index === 'number' && roleOf(memory.lastObservation, index) === 'link';
  if (tool !== 'navigate' && !link) return undefined;
  const url = (args as { url?: unknown }).url;
  if (tool === 'navigate' && (typeof url !== 'string' || opensShownPage(url, page.url()))) return undefined;
  const state = await formState(page, memory.unsubmitted);
  if (!state?.unsent) return undefined;
  memory.leaveHeld = true;
  const button = state.unsent.press === undefined ? `its button "${state.unsent.button}"` : `[${state.unsent.press}]`;
  const fill = stillEmpty(step);
  const first = fill ? `${fill}, then press ${button}` : `Press ${button} first`;
  // (no link offered in the next answer: told to press Log in first, the default model pressed
  // the link again at once; told to press Find books, it pressed the next link)
  if (link) for (const m of (memory.lastObservation ?? '').matchAll(/^\s*\[(\d+)\] link /gm)) memory.pressesOffNextAnswer.add(Number(m[1]));
  if (link) return `Not pressed yet: ${unsentWords(state.unsent)}, and [${index as number}] is a link that may leave the page and lose what you typed. ${first}; to follow the link anyway, press [${index as number}] again.`;
  return `Not opened yet: ${unsentWords(state.unsent)}, and leaving the page loses what you typed. ${first}; to leave anyway, call navigate again.`;
}

/**
 * The empty fields of the page the task gives a value for, spelled out: `Type
 * "sam@example.com" into [2]`, or '' when there are none. The default
 * model, its password typed and the e-mail field empty, was told only to press Log in.
 */
function stillEmpty(step: StepContext): string {
  const observation = step.memory.lastObservation ?? '';
  const empty = emptyTextFields(observation).filter((field) => !step.memory.unsubmitted.includes(field.index));
  const plan = planFields(step.input.params.prompt ?? '', observation, empty.map((field) => ({ ...field, kind: 'text' as const })), step.secrets?.catalogue() ?? []);
  if (!plan.length) return '';
  const words = planWords(plan);
  return `${words[0].toUpperCase()}${words.slice(1)}`;
}

/** How a held typing of what a field holds already begins. */
export const RETYPE_HELD = 'Not typed:';

/**
 * The same text typed again into a field that holds it (by what the agent typed there last),
 * held once per field with what the task gives for the fields still empty. The default model
 * typed the password five times, the e-mail field beside it empty.
 */
export function heldRetype(step: StepContext, tool: string, args: unknown): string | undefined {
  const { memory } = step;
  const { index, text } = args as { index?: unknown; text?: unknown };
  if (tool !== 'input_text' || typeof index !== 'number' || typeof text !== 'string' || memory.retypeHeld.has(index)) return undefined;
  const observation = memory.lastObservation ?? '';
  const line = new RegExp(`^\\s*\\[${index}\\] .*$`, 'm').exec(observation)?.[0];
  // (by what the field shows too, unless masked: a combobox typed "Zaragoza" holds the option chosen since)
  const shown = line ? VALUE_HINT.exec(line)?.[1] : undefined;
  const holds = shown === undefined || /^"•+"$/.test(shown) || shown === JSON.stringify(text);
  if (!line || /\bempty\b/.test(line) || !holds || memory.typedInto.get(index) !== text || (args as { clear?: unknown }).clear === false) return undefined;
  memory.retypeHeld.add(index);
  const fill = stillEmpty(step);
  return `${RETYPE_HELD} [${index}] holds what you typed there already. ${fill ? `${fill}; then send the form with its button.` : 'Go on with the next empty field, or the button that sends the form.'}`;
}

/** How a held press of a link to a part of the page shown whole begins. */
export const JUMP_HELD = 'Not pressed: it only jumps';

/**
 * A press of a link to a part of the same page (`#breads`) while the observation shows the
 * whole page, held once per task: the default model, the price list in view and quoted to it,
 * pressed the bakery's "Breads" and "Visit us" links in turn for 13 steps.
 */
export async function heldJump(step: StepContext, page: Page, tool: string, args: unknown): Promise<string | undefined> {
  const { memory } = step;
  const index = (args as { index?: unknown }).index;
  if (memory.jumpHeld || tool !== 'click_element' || typeof index !== 'number') return undefined;
  const observation = memory.lastObservation ?? '';
  if (roleOf(observation, index) !== 'link' || !/^\(this is the whole page\)$/m.test(observation)) return undefined;
  let target: string | null = null;
  try {
    target = await page.mainFrame().evaluate(({ attr, index }) => {
      const link = document.querySelector(`[${attr}="${index}"]`) as HTMLAnchorElement | null;
      if (!link || !link.href || link.target === '_blank') return null;
      const to = new URL(link.href, location.href);
      if (!to.hash || to.origin + to.pathname + to.search !== location.origin + location.pathname + location.search) return null;
      // a part of the page by its id or name (not a route of a page that draws itself by its #part: "#/profile")
      const id = decodeURIComponent(to.hash.slice(1));
      return document.getElementById(id) || document.getElementsByName(id).length ? to.hash : null;
    }, { attr: INDEX_ATTRIBUTE, index });
  } catch {
    return undefined;
  }
  if (!target) return undefined;
  memory.jumpHeld = true;
  return `${JUMP_HELD} to ${target.slice(0, 40)} of this page, and the observation already shows the whole page: all its text is above. To press [${index}] anyway, press it again; if the page's text answers the task, call done with it.`;
}

/** Whether navigate would open the page the tab shows (navigate.ts answers that itself); an address it refuses, too. */
function opensShownPage(url: string, current: string): boolean {
  try {
    return withoutHash(normalizeUrl(url)) === withoutHash(current);
  } catch {
    return true;
  }
}

/** The page's filled fields and errors (readFormState); undefined when the page cannot be read. */
async function formState(page: Page, indexes: number[]): Promise<FormState | undefined> {
  try {
    return await page.mainFrame().evaluate(readFormState, { attr: INDEX_ATTRIBUTE, indexes });
  } catch {
    return undefined;
  }
}

/** Runs in the page: the filled fields' form and its submit button, and the field errors shown. Self-contained. */
function readFormState(args: { attr: string; indexes: number[] }): FormState {
  const shown = (el: Element) => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden';
  };
  const text = (el: Element) => (el.textContent ?? '').replace(/\s+/g, ' ').trim();
  const present = args.indexes
    .map((index) => ({ index, el: document.querySelector(`[${args.attr}="${index}"]`) }))
    .filter((field): field is { index: number; el: HTMLInputElement } => !!field.el && shown(field.el));
  const fields = present.filter((field) => !!field.el.form);
  const label = (button: Element) => (button.tagName === 'INPUT' ? (button as HTMLInputElement).value : text(button)).slice(0, 60);
  const press = (button: Element) => (button.hasAttribute(args.attr) ? Number(button.getAttribute(args.attr)) : undefined);
  let unsent: FormState['unsent'];
  if (fields.length) {
    const form = fields[0].el.form!;
    const button = form.querySelector('button:not([type]), button[type=submit], input[type=submit]') as HTMLInputElement | null;
    if (button && shown(button)) unsent = { fields: fields.map((field) => field.index), button: label(button), press: press(button) };
  } else if (present.length) {
    // Fields outside any form (a custom listbox): a button of the page that saves what they hold.
    const commit = /^\s*(?:save|submit|send|apply|confirm|update|book|place order|pay)\b/i;
    const button = Array.from(document.querySelectorAll('button, input[type=submit], input[type=button], [role=button]')).find((b) => shown(b) && commit.test(label(b)));
    if (button) unsent = { fields: present.map((field) => field.index), button: label(button), press: press(button) };
  }
  const errors = new Set<string>();
  for (const el of Array.from(document.querySelectorAll('[role=alert], [aria-live=assertive], .error, .field-error, .invalid-feedback, .error-message, [id$="-error"]'))) {
    const message = text(el);
    if (message && message.length <= 160 && shown(el)) errors.add(message);
  }
  for (const el of Array.from(document.querySelectorAll('[aria-invalid=true]'))) {
    const described = el.getAttribute('aria-errormessage') ?? el.getAttribute('aria-describedby');
    const message = described ? text(document.getElementById(described.split(' ')[0]) ?? document.createElement('span')) : '';
    if (shown(el)) errors.add(message || `${(el as HTMLInputElement).name || el.id || 'a field'} is marked invalid`);
  }
  return { unsent, errors: [...errors].slice(0, 3) };
}
