import type { ElementHandle, Locator } from 'playwright-core';
import { z } from 'zod';
import { lit } from '../../recording/playwright-code';
import { elementText } from '../policy/action-facts';
import type { AgentTool } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';
import { ACTION_TIMEOUT_MS, targetElement } from './element-target';
import { chooseInListbox } from './custom-listbox';
import { elementIndex } from './fields';
import { actAndSettle, outcomeNote } from './navigation-watch';

const schema = z
  .object({
    index: elementIndex(),
    value: z.string().optional().describe('The option to choose: its visible text or its value'),
    label: z.string().optional().describe('Alternatively, the visible text of the option'),
  })
  .refine((choice) => choice.value !== undefined || choice.label !== undefined, { message: 'Give the option as value or label' });

interface OptionMatch {
  isSelect: boolean;
  index: number;
  label: string;
  options: string[];
  /** A radio group: the position among the group's radios of the one to click. */
  radio?: number;
}

/**
 * Finds the option in the page: exact value, exact text, then the same ignoring case and
 * spaces, then a part of the text (a whole word of it when shorter than 3 characters: "L" is
 * no part of "Olive", which the default model's "L" had chosen).
 */
function findOption(el: Element, wanted: string): OptionMatch {
  const normalize = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();
  const partOf = (text: string, part: string) => part.length > 0 && (part.length >= 3 ? text.includes(part) : text.split(/[^\p{L}\p{N}]+/u).includes(part));
  // A radio button stands for its group: the option is the radio whose label or value is the one wanted.
  if (el instanceof HTMLInputElement && el.type === 'radio') {
    const scope = el.form ?? el.ownerDocument;
    const group = Array.from(scope.querySelectorAll<HTMLInputElement>('input[type=radio]')).filter((radio) => radio.name === el.name && (el.name !== '' || radio === el));
    const labelOf = (radio: HTMLInputElement) => Array.from(radio.labels ?? []).map((label) => label.textContent ?? '').join(' ').trim() || radio.value;
    const normalized = normalize(wanted);
    const tests = [(radio: HTMLInputElement) => radio.value === wanted, (radio: HTMLInputElement) => normalize(labelOf(radio)) === normalized || normalize(radio.value) === normalized, (radio: HTMLInputElement) => partOf(normalize(labelOf(radio)), normalized)];
    let found = -1;
    for (const test of tests) {
      found = group.findIndex(test);
      if (found >= 0) break;
    }
    return { isSelect: true, index: found, label: found >= 0 ? labelOf(group[found]) : '', options: group.slice(0, 30).map(labelOf), radio: found };
  }
  if (el.tagName !== 'SELECT') return { isSelect: false, index: -1, label: '', options: [] };
  const options = Array.from((el as HTMLSelectElement).options);
  const normalized = normalize(wanted);
  const tests = [
    (option: HTMLOptionElement) => option.value === wanted,
    (option: HTMLOptionElement) => option.label === wanted,
    (option: HTMLOptionElement) => normalize(option.label) === normalized || normalize(option.value) === normalized,
    (option: HTMLOptionElement) => partOf(normalize(option.label), normalized),
  ];
  let index = -1;
  for (const test of tests) {
    index = options.findIndex(test);
    if (index >= 0) break;
  }
  return { isSelect: true, index, label: index >= 0 ? options[index].label : '', options: options.slice(0, 30).map((option) => option.label) };
}

/** The radio at `position` in the group of the radio `locator` points at (the same grouping as findOption). */
async function radioOf(locator: Locator, position: number): Promise<ElementHandle<HTMLInputElement>> {
  const handle = await locator.evaluateHandle((el, position) => {
    const input = el as HTMLInputElement;
    const scope = input.form ?? input.ownerDocument;
    const group = Array.from(scope.querySelectorAll<HTMLInputElement>('input[type=radio]')).filter((radio) => radio.name === input.name && (input.name !== '' || radio === input));
    return group[position];
  }, position);
  const element = handle.asElement();
  if (!element) throw new Error('the radio button is gone');
  return element as ElementHandle<HTMLInputElement>;
}

export const selectOptionTool: AgentTool<typeof schema, 'select_option'> = {
  name: 'select_option',
  description: 'Choose an option of a <select> element (role "select" in the observation), a listbox or combobox, or the radio button of a group, by its [index] and the option\'s text or value.',
  schema,
  async execute(ctx, args) {
    // (an option quoted with an element's index, "Navy  [3]", as the default model wrote it)
    const wanted = (args.value ?? args.label)!.replace(/\s*\[\d+\]\s*$/, '');
    const { locator, frame, target, name } = await targetElement(ctx, args.index);
    const action = `Selecting "${wanted}" in ${name}`;
    const match = await attempt(ctx.signal, action, () => abortable(locator.evaluate(findOption, wanted, { timeout: ACTION_TIMEOUT_MS }), ctx.signal));
    if (!match.isSelect) {
      const chosen = await chooseInListbox(ctx, locator, frame, name, wanted);
      if (chosen === undefined) throw new Error(`${name} is not a <select>: click it to open its list, then click the option`);
      return { summary: `Selected "${chosen}" in ${name}`, target };
    }
    if (match.index < 0) throw new Error(`${name} has no option "${wanted}"; its options are: ${match.options.map((option) => `"${option}"`).join(', ')}`);
    const urlBefore = ctx.page.url();
    if (match.radio !== undefined) {
      // The group's radio with that label, checked as a person would click it.
      const chosen = await attempt(ctx.signal, action, () => abortable(radioOf(locator, match.radio!), ctx.signal));
      const outcome = await attempt(ctx.signal, action, () => actAndSettle(ctx, () => abortable(chosen.check({ timeout: ACTION_TIMEOUT_MS }), ctx.signal)));
      return { summary: `Chose the radio button "${match.label}" of the group of ${name}${outcomeNote(ctx, urlBefore, outcome)}`, target };
    }
    // Choosing may submit a form (onchange): settle like a click.
    const outcome = await attempt(ctx.signal, action, () =>
      actAndSettle(ctx, () => abortable(locator.selectOption({ index: match.index }, { timeout: ACTION_TIMEOUT_MS, noWaitAfter: true }), ctx.signal)),
    );
    return { summary: `Selected "${match.label}" in ${name}${outcomeNote(ctx, urlBefore, outcome)}`, target };
  },
  // The option it chooses, then the element's text.
  async policyFacts(request) {
    return { texts: [...request.typed, ...(await elementText(request))] };
  },
  recording: { index: 'element' },
  playwright(a, { on }) {
    if (!on) return [];
    const wanted = String(a.value ?? a.label ?? '');
    // The agent names an option by its text or its value: whichever the page has.
    return [`await ${on}.selectOption(${lit(wanted)}).catch(() => ${on}.selectOption({ label: ${lit(wanted)} }));`];
  },
};
