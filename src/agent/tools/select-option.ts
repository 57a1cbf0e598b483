import { z } from 'zod';
import type { AgentTool } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';
import { ACTION_TIMEOUT_MS, targetElement } from './element-target';
import { elementIndex } from './fields';
import { actAndSettle, outcomeNote } from './navigation-watch';

const schema = z
  .object({
    index: elementIndex(),
    value: z.string().optional().describe('The option to choose: its visible text or its value'),
    label: z.string().optional().describe('Alternatively, the visible text of the option'),
  })
  .refine((a) => a.value !== undefined || a.label !== undefined, { message: 'Give the option as value or label' });

interface OptionMatch {
  isSelect: boolean;
  index: number;
  label: string;
  options: string[];
}

/** Finds the option in the page: exact value, exact text, then the same ignoring case and spaces, then a part of the text. */
function findOption(el: Element, wanted: string): OptionMatch {
  if (el.tagName !== 'SELECT') return { isSelect: false, index: -1, label: '', options: [] };
  const options = Array.from((el as HTMLSelectElement).options);
  const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();
  const w = norm(wanted);
  const tests = [
    (o: HTMLOptionElement) => o.value === wanted,
    (o: HTMLOptionElement) => o.label === wanted,
    (o: HTMLOptionElement) => norm(o.label) === w || norm(o.value) === w,
    (o: HTMLOptionElement) => w.length > 0 && norm(o.label).includes(w),
  ];
  let index = -1;
  for (const test of tests) {
    index = options.findIndex(test);
    if (index >= 0) break;
  }
  return { isSelect: true, index, label: index >= 0 ? options[index].label : '', options: options.slice(0, 30).map((o) => o.label) };
}

export const selectOptionTool: AgentTool<typeof schema> = {
  name: 'select_option',
  description: 'Choose an option of a <select> element (role "select" in the observation) by its [index] and the option\'s text or value.',
  schema,
  async execute(ctx, args) {
    const wanted = (args.value ?? args.label)!;
    const { locator, target, name } = await targetElement(ctx, args.index);
    const action = `Selecting "${wanted}" in ${name}`;
    const match = await attempt(ctx.signal, action, () => abortable(locator.evaluate(findOption, wanted, { timeout: ACTION_TIMEOUT_MS }), ctx.signal));
    if (!match.isSelect) throw new Error(`${name} is not a <select>: click it to open its list, then click the option`);
    if (match.index < 0) throw new Error(`${name} has no option "${wanted}"; its options are: ${match.options.map((o) => `"${o}"`).join(', ')}`);
    const urlBefore = ctx.page.url();
    // Choosing may submit a form (onchange): settle like a click.
    const outcome = await attempt(ctx.signal, action, () =>
      actAndSettle(ctx, () => abortable(locator.selectOption({ index: match.index }, { timeout: ACTION_TIMEOUT_MS, noWaitAfter: true }), ctx.signal)),
    );
    return { summary: `Selected "${match.label}" in ${name}${outcomeNote(ctx, urlBefore, outcome)}`, target };
  },
};
