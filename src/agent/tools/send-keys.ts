import type { Page } from 'playwright-core';
import { z } from 'zod';
import { lit } from '../../recording/playwright-code';
import { focusedFormSubmits } from '../policy/action-facts';
import type { AgentTool } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';
import { actAndSettle, outcomeNote } from './navigation-watch';

const schema = z.object({
  keys: z
    .string()
    .min(1)
    .describe('Keys to press on the focused element, e.g. "Enter", "Escape", "Control+A", "Shift+Tab"; several separated by spaces are pressed in turn: "Tab Tab Enter"'),
});

/** The focused element when it is a multi-line text field (a textarea, an editable area), with its form's submit button's text. */
async function multiLineFocus(page: Page): Promise<{ button?: string } | undefined> {
  return page
    .evaluate(() => {
      const active = document.activeElement as HTMLElement | null;
      if (!active || !(active instanceof HTMLTextAreaElement || active.isContentEditable)) return undefined;
      const form = (active as HTMLTextAreaElement).form ?? active.closest('form');
      const submit = form?.querySelector<HTMLElement>('button[type="submit"], button:not([type]), input[type="submit"]');
      const text = (submit instanceof HTMLInputElement ? submit.value : submit?.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60);
      return text ? { button: text } : {};
    })
    .catch(() => undefined);
}

export const sendKeysTool: AgentTool<typeof schema, 'send_keys'> = {
  name: 'send_keys',
  description: 'Press keys or key combinations (Enter, Escape, Tab, ArrowDown, Control+A, ...) on the focused element. To type text, use input_text.',
  schema,
  async execute(ctx, { keys }) {
    const presses = keys.trim().split(/\s+/);
    if (presses.length === 1 && /^enter$/i.test(presses[0])) {
      const multiLine = await multiLineFocus(ctx.page);
      // Enter in a textarea adds a line: the default model pressed it to send a contact form and was told nothing changed
      if (multiLine) {
        const send = multiLine.button ? `press its button "${multiLine.button}"` : 'press the button that sends it';
        return { summary: `Not pressed: the focused field is a multi-line text field, where Enter adds a new line and does not send the form. To send the form, ${send} (click_element).`, target: 'Enter', unchanged: true };
      }
    }
    const urlBefore = ctx.page.url();
    const outcome = await attempt(ctx.signal, `Pressing ${keys}`, () =>
      actAndSettle(ctx, async () => {
        for (const key of presses) await abortable(ctx.page.keyboard.press(key), ctx.signal);
      }),
    );
    return { summary: `Pressed ${presses.join(', ')}${outcomeNote(ctx, urlBefore, outcome)}`, target: presses.join(' ') };
  },
  // The keys; Enter submits the focused field's form: its values too.
  async policyFacts({ ctx, args, fromPage }) {
    const keys = String(args.keys ?? '');
    const submits = fromPage && /\bEnter\b/.test(keys) ? await focusedFormSubmits(ctx) : [];
    return { texts: [keys], data: [keys, ...submits] };
  },
  recording: { index: 'none' },
  playwright: (a) => (typeof a.keys === 'string' ? a.keys.trim().split(/\s+/).map((k) => `await page.keyboard.press(${lit(k)});`) : []),
};
