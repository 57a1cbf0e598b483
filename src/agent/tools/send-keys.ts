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

export const sendKeysTool: AgentTool<typeof schema, 'send_keys'> = {
  name: 'send_keys',
  description: 'Press keys or key combinations (Enter, Escape, Tab, ArrowDown, Control+A, ...) on the focused element. To type text, use input_text.',
  schema,
  async execute(ctx, { keys }) {
    const presses = keys.trim().split(/\s+/);
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
