/**
 * A press that would send a form while some of its fields are still empty, or while a choice
 * of it (a select, a radio group) is on another option than one the task names, is held: the
 * model is told what stands against it, and sends the form as it is by pressing again with
 * the same fields in the same state. A small model presses "Send" with the name, the file or
 * the date never filled in, signs in with the password empty after typing the username, and
 * saves a profile with the city still on Paris when the task said Lyon; the site then
 * receives the form and the task cannot be done again.
 */
import type { Page } from 'playwright-core';
import { INDEX_ATTRIBUTE } from '../browser/page-elements';
import type { TaskFile } from '../browser/task-files';
import type { ChoiceField, EmptyField, FilledField, TickField, UnchosenField } from './form-fields';
import { wordsAskedFor, wordsOf } from './index-check';
import { ELEMENT_PARTS } from './observe/page-diff';
import type { StepContext } from './step-context';
import { addressPartFor, addressParts, planFields, planWords, sameAddressPart, shortOptionSaid, type PlannedValue } from './form-plan';
import { searchTerms, untypedValues, valuesNamed } from './task-values';
import { askedToggleState } from './toggle-asked';

export type { ChoiceField, EmptyField, FilledField, TickField, UnchosenField } from './form-fields';

/** The form a press would send, and its empty fields. */
export interface FormToSend {
  /** Tells this form from the page's others (its address and place among the forms). */
  key: string;
  empty: EmptyField[];
  choices: ChoiceField[];
  filled: FilledField[];
  /** Its checkboxes. */
  ticks: TickField[];
}

/** The options of a choice that the task names, each with what in it was named (a short one, "4", next to a word of the choice's label: "4 guests"). */
export function optionsNamed(task: string, options: { text: string; index: number }[], label?: string): { text: string; index: number }[] {
  // (not what the task says no to: "we are on foot, no car")
  const said = ` ${task.toLowerCase().replace(/[^\p{L}\p{N}$€£]+/gu, ' ')} `.replace(/ (?:no|not|without|never)(?: an?| the)? \S+(?= )/g, ' ');
  const words = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}$€£]+/gu, ' ').trim();
  const firstWords = options.map((option) => words(option.text).split(' ')[0] ?? '');
  return options.filter((option, i) => {
    if (label !== undefined && option.text.trim().length <= 2) return shortOptionSaid(task, label, option.text);
    const whole = words(option.text);
    // the option's words before what qualifies them: "Express delivery (2 days, $9)" → "express delivery"
    const head = words(option.text.split(/\s*[(:,–—]|\s-\s|\s[$€£]/)[0] ?? '');
    const first = firstWords[i];
    const phrases = [whole, head];
    // its first word alone, when it tells the options apart and says something ("Express", not "New")
    if (first.length >= 4 && firstWords.filter((w) => w === first).length === 1) phrases.push(first);
    return phrases.some((phrase) => phrase.length >= 3 && said.includes(` ${phrase} `));
  });
}

/**
 * The value the task sets a field to, by its label: "change the city in the profile to Lyon"
 * gives "Lyon" for "City", "set the quantity to 3" gives "3" for "Quantity". Only after a verb
 * that changes (change, set, update, edit, replace) and within the clause of the label.
 */
export function valueSetFor(task: string, label: string): string | undefined {
  const lower = task.toLowerCase();
  const words = label.toLowerCase().replace(/[^\p{L}\p{N} ]+/gu, ' ').trim();
  const first = words.split(/\s+/)[0] ?? '';
  for (const name of [words, first.length >= 4 ? first : ''].filter((n) => n.length >= 3)) {
    const at = new RegExp(`\\b(?:change|set|update|edit|replace)\\b[^.;!?]{0,40}?\\b${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'u').exec(lower);
    if (!at) continue;
    const rest = task.slice(at.index + at[0].length).split(/[.;!?,]\s|\s(?:and|then)\s/)[0];
    const to = /^[^"']{0,40}?\bto\s+(?:"([^"]+)"|'([^']+)'|(\S+@\S+|[\d][\d.,:/ -]*\d|\d|\p{Lu}[\p{L}\d'-]*(?:\s\p{Lu}[\p{L}\d'-]*)*))/u.exec(rest);
    const value = to ? (to[1] ?? to[2] ?? to[3]).trim() : undefined;
    if (value) return value;
  }
  return undefined;
}

/**
 * The form's text fields holding another value than the task sets them to, or than the part
 * of the address it gives (the default model saved a delivery address with the old street).
 */
export function mistypedFields(task: string, filled: FilledField[]): UnchosenField[] {
  const out: UnchosenField[] = [];
  const address = addressParts(task);
  for (const field of filled) {
    const part = addressPartFor(address, field.label);
    const value = valueSetFor(task, field.label) ?? part;
    if (value === undefined || field.value.trim().toLowerCase() === value.toLowerCase() || (value === part && sameAddressPart(part, field.value))) continue;
    out.push({ index: field.index, label: field.label, current: field.value, typed: true, named: { text: value, index: field.index } });
  }
  return out;
}

/** The form's choices on another option than the one the task names (and on none the task names). */
export function unchosenFields(task: string, choices: ChoiceField[]): UnchosenField[] {
  const out: UnchosenField[] = [];
  for (const choice of choices) {
    const named = optionsNamed(task, choice.options, choice.label);
    if (named.length !== 1) continue; // none, or several: the task does not say which
    // on an option the task names (the one named, or another it names too): as the task may want
    if (choice.current && optionsNamed(task, [{ text: choice.current, index: -1 }], choice.label).length) continue;
    out.push({ index: choice.index, label: choice.label, current: choice.current, named: named[0] });
  }
  return out;
}

/**
 * The form's checkboxes left unticked that the task asks to tick: every word of the label that
 * tells labels apart in the task, or two of them and no more than one missing ("I accept the
 * terms of service" for "Accept the terms"), none in a clause that says no ("do not sign up for offers"), and
 * the task saying nothing of turning things off. The default model pressed Continue with "I accept
 * the terms of service" unticked, twice, and the site refused the account.
 */
export function untickedFields(task: string, ticks: TickField[]): UnchosenField[] {
  if (askedToggleState(task) === 'unchecked') return [];
  const said = wordsAskedFor(task);
  return ticks.flatMap((tick) => {
    const own = [...new Set(wordsOf(tick.label))];
    const found = own.filter((w) => said.has(w)).length;
    if (tick.checked || !own.length || !(found === own.length || (found >= 2 && found >= own.length - 1))) return [];
    return [{ index: tick.index, label: tick.label, current: 'unticked', tick: true, named: { text: tick.label, index: tick.index } }];
  });
}

/** At most this many empty fields (and as many choices) are named. */
const MAX_NAMED = 5;
/** Tools that fill no field: left out of the answer after a press held with the values the task gives for its empty fields. */
const NOT_FILLING = ['click_element', 'done', 'extract', 'go_back', 'navigate', 'request_human_input', 'scroll', 'send_keys', 'switch_tab', 'wait'];
/** At most this many presses are held in a task. */
const MAX_HOLDS = 4;

/**
 * What holds the press back, said to the model, or undefined when it goes ahead: a press of
 * a form's submit button (click_element) or Enter in one of its fields (send_keys), with
 * fields of the form empty, the first time in this task for this form.
 */
export async function heldPress(step: StepContext, page: Page, tool: string, args: unknown): Promise<string | undefined> {
  const index = (args as { index?: unknown }).index;
  const enter = tool === 'send_keys' && /^enter$/i.test(String((args as { keys?: unknown }).keys ?? '').trim());
  if (!(tool === 'click_element' && typeof index === 'number') && !enter) return undefined;
  const found = await formToSend(page, enter ? undefined : (index as number));
  // A button outside a form ("Save ticket" of a page's widgets): the choices the observation shows.
  const form = found ?? (enter ? undefined : pressOutsideForm(step.memory.lastObservation ?? '', index as number));
  if (!form) return undefined;
  const task = step.input.params.prompt ?? '';
  const unchosen = [...unchosenFields(task, form.choices), ...mistypedFields(task, form.filled), ...untickedFields(task, form.ticks)];
  if (!form.empty.length && !unchosen.length) return undefined;
  // Pressed again with the same fields as they were held for: sent as it is.
  const key = `${form.key}|${form.empty.map((f) => f.index).join(',')}|${unchosen.map((f) => `${f.index}:${f.current}`).join(',')}`;
  const observation = step.memory.lastObservation ?? '';
  const plan = unchosen.length ? [] : planFields(task, observation, form.empty, step.secrets?.catalogue() ?? []);
  const files = step.memory.files?.available() ?? [];
  // the task gives what an empty field takes: a value of the plan, or a file for a file field
  // (or lists to choose from: held a second time too)
  const known = plan.length > 0 || (files.length > 0 && form.empty.some((field) => field.kind === 'file')) || (form.empty.length > 0 && form.empty.every((field) => field.kind === 'choice'));
  // held a second time then: the default model, held for the e-mail address it had not typed,
  // called done with the task's words, then pressed Log in again, and the form went with the
  // e-mail field empty
  const again = step.memory.formsHeld.has(key);
  if ((again && (!known || step.memory.formsHeld.has(`${key}|again`))) || step.memory.formsHeld.size >= MAX_HOLDS) return undefined;
  step.memory.formsHeld.add(again ? `${key}|again` : key);
  const button = enter ? undefined : (index as number);
  // The values the task gives that were not typed yet, named with the empty fields they may belong to.
  const untyped = form.empty.some((field) => field.kind === 'text') ? untypedValues(task, step.memory.typed, observation) : [];
  // a search field with nothing given to type: what the task names, to search for
  const given = !untyped.length && form.empty.length === 1 && isSearchField(observation, form.empty[0].index) ? searchTerms(task, observation) : untyped;
  step.memory.heldForm = { button, empty: form.empty, unchosen, given, files, plan };
  if (button !== undefined) step.memory.pressesOffNextAnswer.add(button);
  // held for boxes to tick: the form's other boxes not pressed in the next answer (told to tick
  // the terms, the default model ticked "Send me special offers" and sent the form)
  const ticking = unchosen.filter((field) => field.tick).map((field) => field.index);
  if (ticking.length) for (const tick of form.ticks) if (!ticking.includes(tick.index)) step.memory.pressesOffNextAnswer.add(tick.index);
  // the task gives what to fill: only the tools that fill in the next answer (told to type
  // five values, the default model pressed them as keys, pressed the button again, and called
  // done with the form unsent)
  // (told to put the CV file in, the default model pressed Enter and sent the form without it)
  if (known) for (const tool of NOT_FILLING) step.memory.offNextAnswer.add(tool);
  return heldNote(form.empty, button, unchosen, found === undefined, given, files, plan);
}

const HINT = (name: string) => new RegExp(`\\b${name}="((?:[^"\\\\]|\\\\.)*)"`);

/**
 * A press of a button outside any form, with the choices the observation lists (selects and
 * comboboxes with their value and options): a custom listbox's "Save ticket" pressed with the
 * priority still on Normal. Undefined when the element is no button or the page shows no choice.
 */
export function pressOutsideForm(observation: string, index: number): FormToSend | undefined {
  const lines = elementParts(observation);
  const pressed = lines.find((m) => Number(m[1]) === index);
  if (!pressed || pressed[2] !== 'button') return undefined;
  const choices = choicesOf(lines);
  const url = /^URL: (.*)$/m.exec(observation)?.[1] ?? '';
  return choices.length ? { key: `${url}#button${index}`, empty: [], choices, filled: [], ticks: [] } : undefined;
}

/** The selects and comboboxes the observation lists with their options, each with its value. */
export function choicesShown(observation: string): ChoiceField[] {
  return choicesOf(elementParts(observation));
}

/** The observation's element lines, each split into its parts (ELEMENT_PARTS). */
function elementParts(observation: string): RegExpExecArray[] {
  return observation.split('\n').map((line) => ELEMENT_PARTS.exec(line.trim())).filter((m): m is RegExpExecArray => m !== null);
}

function choicesOf(lines: readonly RegExpExecArray[]): ChoiceField[] {
  const choices: ChoiceField[] = [];
  for (const m of lines) {
    if (m[2] !== 'select' && m[2] !== 'combobox') continue;
    const options = HINT('options').exec(m[4])?.[1];
    if (!options) continue;
    const n = Number(m[1]);
    const texts = options.split(' | ').filter((text) => !/^… \d+ more$/.test(text));
    choices.push({ index: n, label: m[3], current: HINT('value').exec(m[4])?.[1] ?? '', options: texts.map((text) => ({ text, index: n })) });
  }
  return choices;
}

/** The observation's line of [index] is a search field (role searchbox, type=search, or a label that says search). */
export function isSearchField(observation: string, index: number): boolean {
  const line = new RegExp(`^\\s*\\[${index}\\] (\\S+) "((?:[^"\\\\]|\\\\.)*)"(.*)$`, 'm').exec(observation);
  return !!line && (line[1] === 'searchbox' || /\btype=search\b/.test(line[3]) || /\bsearch\b/i.test(line[2]));
}

/** What stands against sending: the empty fields, and the choices on another option than the task names. */
function against(empty: EmptyField[], unchosen: UnchosenField[]): string {
  const parts: string[] = [];
  if (empty.length) {
    const named = empty.slice(0, MAX_NAMED).map((field) => `[${field.index}] "${field.label}"`);
    const more = empty.length > MAX_NAMED ? ` and ${empty.length - MAX_NAMED} more` : '';
    parts.push(`${named.join(', ')}${more} empty`);
  }
  for (const field of unchosen.slice(0, MAX_NAMED)) {
    if (field.typed) parts.push(`[${field.index}] "${field.label}" holding "${field.current}" while the task says "${field.named.text}"`);
    else if (field.tick) parts.push(`[${field.index}] "${field.label}" unticked while the task asks for it`);
    else parts.push(`[${field.index}] "${field.label}" ${field.current ? `on "${field.current}"` : 'not chosen'} while the task says "${field.named.text}" ([${field.named.index}])`);
  }
  return parts.join(', and ');
}

/** What the model is told: which fields are empty or on another option, how to fix them, how to send the form as it is. */
export function heldNote(
  empty: EmptyField[],
  button: number | undefined,
  unchosen: UnchosenField[] = [],
  outsideForm = false,
  given: readonly string[] = [],
  files: readonly TaskFile[] = [],
  plan: readonly PlannedValue[] = [],
): string {
  const count = empty.length + unchosen.length;
  const one = count === 1;
  const kinds = [...empty.map((field) => field.kind), ...unchosen.map((field) => (field.typed ? ('text' as const) : field.tick ? ('tick' as const) : ('choice' as const)))];
  const toolOf = { file: 'upload_file', choice: 'select_option', text: 'input_text', tick: 'click_element' } as const;
  const tools = [...new Set(kinds.map((kind) => toolOf[kind]))].join(' or ');
  const again = button === undefined ? 'press Enter again' : `press [${button}] again`;
  const typeIn = valuesFor(empty, unchosen, given, files) ?? planned(plan);
  // only lists to choose from, none named by the task: the option that fits (the default
  // model, told to fill a topic list "with what the task gives", sent the form without one)
  const choices = !unchosen.length && !typeIn && empty.length > 0 && empty.every((field) => field.kind === 'choice');
  const first = unchosen.length && !empty.length ? `First ${settings(unchosen)}` : typeIn ? `First ${typeIn}` : choices ? `First choose in ${one ? 'it the option' : 'each the option'} that fits the task` : `Fill ${one ? 'it' : 'them'} first with what the task gives${valuesNamed(given)}`;
  const asIs = unchosen.length && !empty.length ? `if ${one ? 'it is' : 'they are'} as the task wants` : choices ? 'if none fits' : `if the task gives nothing for ${one ? 'it' : 'them'}`;
  if (outsideForm) return `Not pressed yet: ${against(empty, unchosen)}. ${first} (${tools}); ${asIs}, ${again} to go ahead as it is.`;
  return `Not pressed yet: this would send the form with ${against(empty, unchosen)}. ${first} (${tools}); ${asIs}, ${again} to send the form as it is.`;
}

/** A done while the last press held back is still not performed: what is said, once per task (with done-check.ts's objection). */
export function heldFormObjection(held: NonNullable<StepContext['memory']['heldForm']>): string {
  const press = held.button === undefined ? 'Enter' : `[${held.button}]`;
  if (!held.unchosen.length) {
    const fields = held.empty.slice(0, MAX_NAMED).map((field) => `[${field.index}] "${field.label}"`).join(', ');
    const one = held.empty.length === 1;
    const typeIn = valuesFor(held.empty, held.unchosen, held.given ?? [], held.files ?? []) ?? planned(held.plan ?? []);
    const fill = typeIn ? `First ${typeIn}` : `Fill ${one ? 'it' : 'them'} with what the task gives${valuesNamed(held.given ?? [])}`;
    return `Not accepted yet: the form was not sent: your press of ${press} was held because ${fields} ${one ? 'was' : 'were'} empty. ${fill}, then press ${press}; if the task is complete as it is, call done again.`;
  }
  const one = held.empty.length + held.unchosen.length === 1;
  const set = held.empty.length ? `Set ${one ? 'it' : 'them'} as the task says` : `First ${settings(held.unchosen)}`;
  return `Not accepted yet: the form was not sent: your press of ${press} was held because of ${against(held.empty, held.unchosen)}. ${set}, then press ${press}; if the task is complete as it is, call done again.`;
}

/**
 * What fills each empty field, when the task leaves no doubt: one empty text field and one
 * value the task gives, not typed yet (`type "555-0100" into [3]`); one empty file field and
 * one file of the task (`put cv-grace.txt into [2] with fileIds ["file_1"]`). Told to fill the
 * phone field "with what the task gives: "555-0100"", the default model pressed the button
 * again and sent the form empty; told to fill the CV field with upload_file, it sent it without.
 */
function valuesFor(empty: EmptyField[], unchosen: UnchosenField[], given: readonly string[], files: readonly TaskFile[]): string | undefined {
  if (unchosen.length || !empty.length) return undefined;
  const texts = empty.filter((field) => field.kind === 'text');
  const uploads = empty.filter((field) => field.kind === 'file');
  if (texts.length + uploads.length !== empty.length) return undefined;
  if (texts.length && (texts.length !== 1 || given.length !== 1)) return undefined;
  if (uploads.length && (uploads.length !== 1 || files.length !== 1)) return undefined;
  const parts: string[] = [];
  if (texts.length) parts.push(`type "${given[0]}" into [${texts[0].index}]`);
  if (uploads.length) parts.push(`put ${files[0].name} into [${uploads[0].index}] with fileIds ["${files[0].fileId}"]`);
  return parts.join(' and ');
}

/** The plan of form-plan.ts said, for more than one field (one field and one value is valuesFor's). */
function planned(plan: readonly PlannedValue[]): string | undefined {
  return plan.length > 1 ? planWords(plan) : undefined;
}

/**
 * What sets the fields as the task says, spelled out: `type "Lyon" into [1]`. Told only to set
 * the city "as the task says", the default model pressed Save again with Paris in it.
 */
function settings(unchosen: UnchosenField[]): string {
  return unchosen
    .slice(0, MAX_NAMED)
    .map((field) => (field.typed ? `type "${field.named.text}" into [${field.index}]` : field.tick ? `tick [${field.index}]` : field.named.index === field.index ? `choose "${field.named.text}" in [${field.index}]` : `choose "${field.named.text}" ([${field.named.index}])`))
    .join(', ');
}

/** The form the press sends and its empty fields, looked for in every frame; undefined when the press sends no form. */
async function formToSend(page: Page, index: number | undefined): Promise<FormToSend | undefined> {
  for (const frame of page.frames()) {
    try {
      const found = await frame.evaluate(readFormToSend, { attr: INDEX_ATTRIBUTE, index: index ?? null });
      if (found) return found;
    } catch {
      // a frame gone or navigating: the press is not held for it
    }
  }
  return undefined;
}

/** Runs in a frame: the form the element (or the focused field, for Enter) would send, its empty indexed fields and its choices. Self-contained. */
function readFormToSend(args: { attr: string; index: number | null }): FormToSend | undefined {
  // (Enter: the focused field's form)
  const el = args.index === null ? (document.hasFocus() ? document.activeElement : null) : document.querySelector(`[${args.attr}="${args.index}"]`);
  const sends = args.index === null ? el instanceof HTMLInputElement : (el instanceof HTMLButtonElement && el.type === 'submit') || (el instanceof HTMLInputElement && (el.type === 'submit' || el.type === 'image'));
  const form = sends ? (el as HTMLInputElement | HTMLButtonElement).form : null;
  if (!form) return undefined;
  const shown = (el: Element) => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden';
  };
  const clean = (text: string | null | undefined) => (text ?? '').replace(/\s+/g, ' ').trim().slice(0, 60);
  // A label's own words, without the text of the controls inside it (a select's options).
  const labelText = (label: HTMLLabelElement | undefined) => {
    if (!label) return '';
    const copy = label.cloneNode(true) as HTMLElement;
    for (const inner of Array.from(copy.querySelectorAll('select, textarea, input, button'))) inner.remove();
    return clean(copy.textContent);
  };
  const notText = new Set(['hidden', 'submit', 'button', 'reset', 'image', 'checkbox', 'radio', 'range', 'color']);
  const empty: EmptyField[] = [];
  const choices: ChoiceField[] = [];
  const filled: FilledField[] = [];
  const ticks: TickField[] = [];
  const radios = new Map<string, ChoiceField>();
  for (const el of Array.from(form.elements)) {
    const index = Number(el.getAttribute(args.attr));
    if (!el.hasAttribute(args.attr) || !Number.isInteger(index) || !shown(el)) continue;
    const field = el as HTMLInputElement;
    const labelOf = (kindName: string) => labelText(field.labels?.[0]) || clean(field.getAttribute('aria-label')) || clean(field.getAttribute('placeholder')) || clean(field.name) || kindName;
    const typed = (el instanceof HTMLInputElement && !notText.has(el.type)) || el instanceof HTMLTextAreaElement;
    if (typed && !field.disabled && !field.readOnly) {
      const kind = field.type === 'file' ? 'file' : 'text';
      // (one its label calls optional is not empty here: held for "Running club (optional)", the default model called the task done)
      if (kind === 'file' ? !field.files?.length : !field.value.trim()) {
        if (field.required || !/\boptional\b/i.test(labelOf(kind))) empty.push({ index, label: labelOf(kind), kind });
      } else if (kind === 'text' && field.type !== 'password') filled.push({ index, label: labelOf('text'), value: field.value.slice(0, 200) });
    } else if (el instanceof HTMLSelectElement && !el.disabled) {
      if (!el.value) empty.push({ index, label: labelOf('choice'), kind: 'choice' });
      const options = Array.from(el.options).filter((o) => o.value && !o.disabled).map((o) => ({ text: clean(o.text), index }));
      if (el.value) choices.push({ index, label: labelOf('choice'), current: clean(el.selectedOptions[0]?.text), options });
    } else if (el instanceof HTMLInputElement && el.type === 'checkbox' && !el.disabled) {
      ticks.push({ index, label: labelText(el.labels?.[0]) || clean(el.getAttribute('aria-label')) || clean(el.name) || 'checkbox', checked: el.checked });
    } else if (el instanceof HTMLInputElement && el.type === 'radio' && el.name && !el.disabled) {
      let group = radios.get(el.name);
      if (!group) {
        const fieldset = el.closest('fieldset');
        const legend = clean(fieldset?.querySelector('legend')?.textContent) || clean(fieldset?.getAttribute('aria-label')) || clean(el.name);
        radios.set(el.name, (group = { index, label: legend, current: '', options: [] }));
      }
      const text = labelText(el.labels?.[0]) || clean(el.getAttribute('aria-label')) || clean(el.value);
      group.options.push({ text, index });
      if (el.checked) group.current = text;
    }
  }
  choices.push(...radios.values());
  const place = Array.from(document.forms).indexOf(form);
  return { key: `${location.origin}${location.pathname}#${place}`, empty, choices, filled, ticks };
}
