/**
 * A press that would send a form while some of its fields are still empty is held once per
 * form and task: the model is told which fields are empty, and sends the form as it is by
 * pressing again. A small model presses "Send" with the name, the file or the date never
 * filled in; the site then receives an empty field and the task cannot be done again.
 */
import type { Page } from 'playwright-core';
import { INDEX_ATTRIBUTE } from '../browser/page-elements';
import type { StepContext } from './step-context';

/** An empty field of the form a press would send, as the observation names it. */
export interface EmptyField {
  index: number;
  label: string;
  kind: 'text' | 'file' | 'choice';
}

/** The form a press would send, and its empty fields. */
export interface FormToSend {
  /** Tells this form from the page's others (its address and place among the forms). */
  key: string;
  empty: EmptyField[];
}

/** At most this many empty fields are named. */
const MAX_NAMED = 5;

/**
 * What holds the press back, said to the model, or undefined when it goes ahead: a press of
 * a form's submit button (click_element) or Enter in one of its fields (send_keys), with
 * fields of the form empty, the first time in this task for this form.
 */
export async function heldPress(step: StepContext, page: Page, tool: string, args: unknown): Promise<string | undefined> {
  const index = (args as { index?: unknown }).index;
  const enter = tool === 'send_keys' && /^enter$/i.test(String((args as { keys?: unknown }).keys ?? '').trim());
  if (!(tool === 'click_element' && typeof index === 'number') && !enter) return undefined;
  const form = await formToSend(page, enter ? undefined : (index as number));
  if (!form || !form.empty.length || step.memory.formsHeld.has(form.key)) return undefined;
  step.memory.formsHeld.add(form.key);
  step.memory.heldForm = { button: enter ? undefined : (index as number), empty: form.empty };
  return heldNote(form.empty, enter ? undefined : (index as number));
}

/** What the model is told: which fields are empty, how to fill them, how to send the form as it is. */
export function heldNote(empty: EmptyField[], button: number | undefined): string {
  const named = empty.slice(0, MAX_NAMED).map((field) => `[${field.index}] "${field.label}"`);
  const more = empty.length > MAX_NAMED ? ` and ${empty.length - MAX_NAMED} more` : '';
  const one = empty.length === 1;
  const tools = [...new Set(empty.map((field) => (field.kind === 'file' ? 'upload_file' : field.kind === 'choice' ? 'select_option' : 'input_text')))].join(' or ');
  const again = button === undefined ? 'press Enter again' : `press [${button}] again`;
  return `Not pressed yet: this would send the form with ${named.join(', ')}${more} empty. Fill ${one ? 'it' : 'them'} first with what the task gives (${tools}); if the task gives nothing for ${one ? 'it' : 'them'}, ${again} to send the form as it is.`;
}

/** A done while the last press held back is still not performed: what is said, once per task (with done-check.ts's objection). */
export function heldFormObjection(held: NonNullable<StepContext['memory']['heldForm']>): string {
  const fields = held.empty.slice(0, MAX_NAMED).map((field) => `[${field.index}] "${field.label}"`).join(', ');
  const press = held.button === undefined ? 'Enter' : `[${held.button}]`;
  return `Not accepted yet: the form was not sent: your press of ${press} was held because ${fields} ${held.empty.length === 1 ? 'was' : 'were'} empty. Fill ${held.empty.length === 1 ? 'it' : 'them'} with what the task gives, then press ${press}; if the task is complete as it is, call done again.`;
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

/** Runs in a frame: the form the element (or the focused field, for Enter) would send, and its empty indexed fields. Self-contained. */
function readFormToSend(args: { attr: string; index: number | null }): FormToSend | undefined {
  let form: HTMLFormElement | null = null;
  if (args.index === null) {
    const focused = document.hasFocus() ? document.activeElement : null;
    if (focused instanceof HTMLInputElement) form = focused.form;
  } else {
    const el = document.querySelector(`[${args.attr}="${args.index}"]`);
    if (el instanceof HTMLButtonElement && el.type === 'submit') form = el.form;
    else if (el instanceof HTMLInputElement && (el.type === 'submit' || el.type === 'image')) form = el.form;
  }
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
  for (const el of Array.from(form.elements)) {
    const index = Number(el.getAttribute(args.attr));
    if (!el.hasAttribute(args.attr) || !Number.isInteger(index) || !shown(el)) continue;
    let kind: EmptyField['kind'] | undefined;
    if (el instanceof HTMLInputElement && !notText.has(el.type) && !el.disabled && !el.readOnly) {
      if (el.type === 'file') kind = el.files?.length ? undefined : 'file';
      else kind = el.value.trim() ? undefined : 'text';
    } else if (el instanceof HTMLTextAreaElement && !el.disabled && !el.readOnly) kind = el.value.trim() ? undefined : 'text';
    else if (el instanceof HTMLSelectElement && !el.disabled) kind = el.value ? undefined : 'choice';
    if (!kind) continue;
    const field = el as HTMLInputElement;
    const label = labelText(field.labels?.[0]) || clean(field.getAttribute('aria-label')) || clean(field.getAttribute('placeholder')) || clean(field.name) || kind;
    empty.push({ index, label, kind });
  }
  const place = Array.from(document.forms).indexOf(form);
  return { key: `${location.origin}${location.pathname}#${place}`, empty };
}
