import { z } from 'zod';
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

export const inputTextTool: AgentTool<typeof schema> = {
  name: 'input_text',
  description: 'Type text into a text field, text area or editable area by its [index]. By default the field is cleared first.',
  schema,
  async execute(ctx, { index, text, clear }) {
    const { locator, info, target, name } = await targetElement(ctx, index);
    if (info.tag === 'SELECT') throw new Error(`${name} is a select: use select_option to choose one of its options`);
    text = dateFor(info.inputType, text, name);
    await attempt(ctx.signal, `Typing into ${name}`, async () => {
      if (clear) {
        await abortable(locator.fill(text, { timeout: ACTION_TIMEOUT_MS }), ctx.signal);
        return;
      }
      await abortable(locator.focus({ timeout: ACTION_TIMEOUT_MS }), ctx.signal);
      await abortable(locator.press('End', { timeout: ACTION_TIMEOUT_MS }), ctx.signal);
      await abortable(locator.pressSequentially(text, { timeout: ACTION_TIMEOUT_MS }), ctx.signal);
    });
    const shown = info.secret || TOKEN_LIKE.test(text) ? MASK : JSON.stringify(text.length > 200 ? `${text.slice(0, 199)}…` : text);
    return { summary: `${clear ? 'Typed' : 'Appended'} ${shown} into ${name}`, target };
  },
};

/** A date input takes its date as YYYY-MM-DD: a date written otherwise is read into that form. */
function dateFor(inputType: string, text: string, name: string): string {
  if (inputType !== 'date' || !text.trim()) return text;
  const date = isoDate(text);
  if (!date) throw new Error(`${name} is a date field: give the date as YYYY-MM-DD (for example 2026-03-14)`);
  return date;
}
