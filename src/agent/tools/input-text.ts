import { z } from 'zod';
import { elementText } from '../policy/action-facts';
import type { AgentTool } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';
import { ACTION_TIMEOUT_MS, targetElement } from './element-target';
import { isoDate } from './dates';
import { elementIndex } from './fields';

const schema = z.object({
  index: elementIndex(),
  text: z.string().describe('The text to type'),
  clear: z.boolean().default(true).describe('Replace what the field holds (default); false appends to it'),
});

const MASK = '••••';
/** Long unbroken tokens of letters and digits (API keys, reset tokens) are not echoed either. */
const TOKEN_LIKE = /^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_\-+/=.]{20,}$/;

export const inputTextTool: AgentTool<typeof schema, 'input_text'> = {
  name: 'input_text',
  description: 'Type text into a text field, text area or editable area by its [index]. By default the field is cleared first.',
  schema,
  async execute(ctx, { index, text, clear }) {
    const { locator, info, target, name } = await targetElement(ctx, index);
    if (info.tag === 'SELECT') throw new Error(`${name} is a select: use select_option to choose one of its options`);
    text = dateFor(info.inputType, text, name);
    // A field that holds one whole value (a date, a number) takes no text at its end: set.
    clear ||= WHOLE_VALUE.has(info.inputType);
    await attempt(ctx.signal, `Typing into ${name}`, async () => {
      if (clear) {
        await abortable(locator.fill(text, { timeout: ACTION_TIMEOUT_MS }), ctx.signal);
        return;
      }
      await abortable(locator.focus({ timeout: ACTION_TIMEOUT_MS }), ctx.signal);
      await abortable(locator.press('End', { timeout: ACTION_TIMEOUT_MS }), ctx.signal);
      // The whole text in one call to this element while it has the focus: a page that moves the focus after a key gets none of it elsewhere.
      const typed = await abortable(locator.evaluate(insertWhileFocused, text, { timeout: ACTION_TIMEOUT_MS }), ctx.signal);
      if (!typed) throw new Error(`${name} did not keep the focus; nothing was typed`);
    });
    const shown = info.secret || TOKEN_LIKE.test(text) ? MASK : JSON.stringify(text.length > 200 ? `${text.slice(0, 199)}…` : text);
    return { summary: `${clear ? 'Typed' : 'Appended'} ${shown} into ${name}`, target };
  },
  // The field's text (what it types is in the facts already).
  async policyFacts(request) {
    return { texts: await elementText(request) };
  },
  recording: { index: 'element' },
  playwright(a, { on, text }) {
    if (!on || typeof a.text !== 'string') return [];
    const typed = text(a.text);
    return a.clear === false ? [`await ${on}.press('End');`, `await ${on}.pressSequentially(${typed});`] : [`await ${on}.fill(${typed});`];
  },
};

/** Inputs whose value is one whole (no caret to type at the end of): a small model appended a date to an empty date field, which failed twice. */
const WHOLE_VALUE = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'number', 'range', 'color']);

/** A date input takes its date as YYYY-MM-DD: a date written otherwise is read into that form. */
function dateFor(inputType: string, text: string, name: string): string {
  if (inputType !== 'date' || !text.trim()) return text;
  const date = isoDate(text);
  if (!date) throw new Error(`${name} is a date field: give the date as YYYY-MM-DD (for example 2026-03-14)`);
  return date;
}

/**
 * Runs in the element's frame: inserts `text` at the caret in one go, only when the element
 * is the one focused (in its document or shadow root). False when it is not, or takes no text.
 */
function insertWhileFocused(el: Element, text: string): boolean {
  // Focused all the way up: in its shadow root, that root's host in the one above, ..., in the document.
  for (let node: Element = el; ; ) {
    const root = node.getRootNode() as Document | ShadowRoot;
    if (root.activeElement !== node) return false;
    if (!('host' in root)) break;
    node = root.host;
  }
  return text === '' || document.execCommand('insertText', false, text);
}
