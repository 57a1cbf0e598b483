/**
 * A form the browser would not send: a press of its submit button is answered by the
 * browser's own check of the fields (required, e-mail, pattern, length, range), whose message
 * is a bubble outside the page's text, so neither the observation nor the page change shows
 * it. Read after a press that led nowhere, it is said with the press: which fields stopped the
 * form, and why, in the browser's terms and never with what the field holds.
 */
import type { Frame } from 'playwright-core';
import { INDEX_ATTRIBUTE } from '../../browser/page-elements';
import { abortable } from './abort';

export interface RefusedField {
  /** The field's observation index, when it has one. */
  index: number | null;
  label: string;
  reason: string;
}

/**
 * The fields that stop the form the element `index` of `frame` submits (empty when it sends no
 * form or the form is valid); with `index` null, the fields of the frame the browser has shown
 * as refused (`:user-invalid`: after a press of their form's submit, or once edited).
 */
export async function refusedFields(frame: Frame, index: number | null, signal: AbortSignal): Promise<RefusedField[]> {
  try {
    return await abortable(frame.evaluate(readRefused, { attr: INDEX_ATTRIBUTE, index }), signal);
  } catch (err) {
    if (signal.aborted) throw err;
    // the frame went away or navigated: nothing was refused that can be said
    return [];
  }
}

/** The refused fields named: `[2] "Email" (not an e-mail address) and [3] "Message" (required, empty)`. */
export function namedFields(fields: RefusedField[]): string {
  const named = fields.map((field) => `${field.index === null ? '' : `[${field.index}] `}"${field.label}" (${field.reason})`);
  return named.length > 1 ? `${named.slice(0, -1).join(', ')} and ${named[named.length - 1]}` : (named[0] ?? '');
}

/** What a press summary adds for the refused fields: '' when none. */
export function refusedNote(fields: RefusedField[], press: string): string {
  if (!fields.length) return '';
  return `; the form was not sent: the browser refused ${namedFields(fields)}. Correct ${fields.length > 1 ? 'them' : 'it'}, then press ${press} again`;
}

/** Runs in a frame: the fields the browser's check refuses, of the submit control's form or shown as refused. Self-contained. */
export function readRefused(args: { attr: string; index: number | null }): RefusedField[] {
  let fields: HTMLInputElement[];
  if (args.index === null) {
    fields = Array.from(document.querySelectorAll(':user-invalid')) as HTMLInputElement[];
  } else {
    const el = document.querySelector(`[${args.attr}="${args.index}"]`);
    const submits = (el instanceof HTMLButtonElement && el.type === 'submit') || (el instanceof HTMLInputElement && (el.type === 'submit' || el.type === 'image'));
    const control = el as HTMLButtonElement | HTMLInputElement | null;
    const form = submits && control ? control.form : null;
    if (!form || form.noValidate || control?.formNoValidate) return [];
    fields = Array.from(form.elements) as HTMLInputElement[];
  }
  const clean = (text: string | null | undefined) => (text ?? '').replace(/\s+/g, ' ').trim().slice(0, 60);
  const refused: RefusedField[] = [];
  for (const field of fields) {
    if (!field.willValidate || field.validity.valid) continue;
    const v = field.validity;
    const kind = field.type === 'checkbox' ? 'not ticked' : field instanceof HTMLSelectElement || field.type === 'radio' ? 'none chosen' : 'empty';
    const reason = v.valueMissing
      ? `required, ${kind}`
      : v.typeMismatch
        ? field.type === 'email' ? 'not an e-mail address' : field.type === 'url' ? 'not a web address' : `not a valid ${field.type}`
        : v.patternMismatch
          ? `not in the form the page asks${field.title ? `: ${clean(field.title)}` : ''}`
          : v.tooShort ? `at least ${field.minLength} characters`
            : v.tooLong ? `at most ${field.maxLength} characters`
              : v.rangeUnderflow ? `at least ${field.min}`
                : v.rangeOverflow ? `at most ${field.max}`
                  : v.stepMismatch ? `in steps of ${field.step}`
                    : v.badInput ? 'not a valid entry'
                      : clean(field.validationMessage) || 'refused by the page';
    const index = Number(field.getAttribute(args.attr));
    const label = clean(field.labels?.[0]?.textContent) || clean(field.getAttribute('aria-label')) || clean(field.getAttribute('placeholder')) || clean(field.name) || field.type;
    refused.push({ index: field.hasAttribute(args.attr) && Number.isInteger(index) ? index : null, label, reason });
    if (refused.length === 4) break;
  }
  return refused;
}
