/**
 * A choice of an option while another option of the same list holds more of the task's words
 * ("Make Zaragoza in Spain my home city": "Zaragoza, Aragon, Spain" over "Zaragoza, Puebla,
 * Mexico"), held once per option chosen, for a model that follows the schemas. The default
 * model typed "Zaragoza" into an autocomplete and chose the Mexican one of its three.
 */
import { saveButton, wordsOf } from './index-check';
import { meantWords } from './meanings';
import { hasState, observedElements, OPTIONS_HINT, VALUE_HINT } from './observe/page-diff';

/** How a held choice of an option the task names less than another begins. */
export const OPTION_HELD = 'Not chosen: the task names';

interface Option {
  /** The option's element index, when it is an element of its own (a listbox's option). */
  index?: number;
  text: string;
}

/** The options of the list the action chooses from, and the one it chooses; undefined for an action that chooses none. */
function choiceOf(observation: string, tool: string, args: { index?: unknown; value?: unknown; label?: unknown }): { options: Option[]; chosen: Option; label: string } | undefined {
  if (typeof args.index !== 'number') return undefined;
  const elements = observedElements(observation);
  const target = elements.find((e) => e.index === args.index);
  if (!target) return undefined;
  if (target.role === 'option' && (tool === 'click_element' || tool === 'select_option')) {
    const options = elements.filter((e) => e.role === 'option').map((e) => ({ index: e.index, text: e.label }));
    return { options, chosen: { index: target.index, text: target.label }, label: elements.find((e) => e.role === 'combobox')?.label ?? '' };
  }
  const hint = OPTIONS_HINT.exec(target.line)?.[1];
  const value = typeof args.label === 'string' ? args.label : typeof args.value === 'string' ? args.value : undefined;
  if (tool !== 'select_option' || target.role !== 'select' || !hint || value === undefined) return undefined;
  const options = hint.split(' | ').map((text) => ({ text }));
  const chosen = options.find((o) => o.text.toLowerCase() === value.toLowerCase());
  return chosen && { options, chosen, label: target.label };
}

/** An option that asks for a choice rather than being one ("Choose a size", "-- Select --"). */
const PLACEHOLDER = /^\W*(?:choose|select|pick|please|none)\b/i;

/**
 * The option that holds more of the task's words than any other, when the chosen one holds
 * fewer; undefined otherwise. Words of the list's own label ("size" of "T-shirt size") and
 * options that ask for a choice count for nothing: "Choose a size" was taken over "M".
 */
export function betterOption(task: string, options: Option[], chosen: Option, label = ''): Option | undefined {
  const labelWords = new Set(wordsOf(label));
  // (and the words it means: "broken" is "damaged")
  const taskWords = new Set([...wordsOf(task), ...meantWords(task)].filter((w) => !labelWords.has(w)));
  const score = (option: Option) => (PLACEHOLDER.test(option.text) ? 0 : new Set(wordsOf(option.text).filter((w) => taskWords.has(w))).size);
  const scored = options.map((option) => ({ option, score: score(option) })).sort((a, b) => b.score - a.score);
  if (scored.length < 2 || scored[0].score === scored[1].score || scored[0].option.text === chosen.text) return undefined;
  return score(chosen) < scored[0].score ? scored[0].option : undefined;
}

/** The hold of a choice of an option another option of its list fits the task better, or undefined. */
export function heldOption(task: string, observation: string, tool: string, args: unknown): { note: string; key: string } | undefined {
  const choice = choiceOf(observation, tool, (args ?? {}) as { index?: unknown; value?: unknown; label?: unknown });
  if (!choice) return undefined;
  const better = betterOption(task, choice.options, choice.chosen, choice.label);
  if (!better) return undefined;
  const labelWords = new Set(wordsOf(choice.label));
  const taskWords = new Set(wordsOf(task).filter((w) => !labelWords.has(w)));
  const chosenWords = wordsOf(choice.chosen.text);
  // the words as the option spells them ("Spain")
  const named = [...new Set(wordsOf(better.text).filter((w) => taskWords.has(w) && !chosenWords.includes(w)))].map((w) => better.text.match(new RegExp(`(?<![\\p{L}\\p{N}])${w}(?![\\p{L}\\p{N}])`, 'iu'))?.[0] ?? w);
  const quote = (option: Option) => (option.index === undefined ? `"${option.text}"` : `[${option.index}] "${option.text}"`);
  const again = tool === 'click_element' ? `press [${(args as { index: number }).index}] again` : 'choose it again';
  return {
    key: choice.chosen.text,
    note: `${OPTION_HELD} ${named.map((w) => `"${w}"`).join(', ')}, which ${quote(better)} has and ${quote(choice.chosen)} has not. Choose ${quote(better)} instead; if ${quote(choice.chosen)} is what the task means, ${again}.`,
  };
}

/** How a held choice of the option a list holds already begins. */
export const SAME_OPTION_HELD = 'Not chosen: it is chosen already:';

/**
 * The hold of a select_option of the option its list holds already (a select's value, or the value of
 * the combobox an open list's option belongs to), with the button that saves, or undefined.
 * The default model, "High" chosen and shown in the field, opened the list and chose "High"
 * again for 16 steps, the ticket never saved.
 */
export function heldSameOption(observation: string, tool: string, args: unknown): { note: string; key: string } | undefined {
  if (tool !== 'select_option') return undefined;
  const choice = choiceOf(observation, tool, (args ?? {}) as { index?: unknown; value?: unknown; label?: unknown });
  if (!choice) return undefined;
  const elements = observedElements(observation);
  const index = (args as { index: number }).index;
  const at = elements.findIndex((e) => e.index === index);
  const target = elements[at];
  // an option's list: the nearest combobox or select listed before it
  const field = target?.role === 'option' ? elements.slice(0, at).reverse().find((e) => e.role === 'combobox' || e.role === 'select') : target;
  const holds = field && VALUE_HINT.exec(field.line)?.[1];
  if (!field || !holds || holds.slice(1, -1).replace(/\\(.)/g, '$1').toLowerCase() !== choice.chosen.text.toLowerCase()) return undefined;
  const save = saveButton(observation);
  return {
    key: String(field.index),
    note: `${SAME_OPTION_HELD} [${field.index}] ${field.role} "${field.label}" holds "${choice.chosen.text}". Go on with the rest of the task${save ? ` (press ${save} to save it)` : ''}; if it must be chosen again, choose it again.`,
  };
}

/** A size as shops label it ("L", "Size M", "Large", "XL (44–46)"). */
const SIZE = /^(?:size\s+)?(XXS|XS|S|M|L|XL|XXL|XXXL|[2-5]XL|extra[- ]small|small|medium|large|extra[- ]large)(?:\s*[(–-].*)?$/i;
/** The size a task asks for ("…, size L", "in size XL", "T-shirt size M", "size large"). */
const TASK_SIZE = /\bsize\s+(XXS|XS|S|M|L|XL|XXL|XXXL|[2-5]XL|extra[- ]small|small|medium|large|extra[- ]large)\b/i;
/** Sizes in words, as letters. */
const SIZE_WORDS: Record<string, string> = { 'EXTRA SMALL': 'XS', SMALL: 'S', MEDIUM: 'M', LARGE: 'L', 'EXTRA LARGE': 'XL' };
const asLetters = (size: string) => SIZE_WORDS[size.toUpperCase().replace('-', ' ')] ?? size.toUpperCase();

/** The size of a label, as letters ("Large (40–42)": "L"), or undefined. */
function sizeOfLabel(label: string): string | undefined {
  const size = SIZE.exec(label.trim())?.[1];
  return size && asLetters(size);
}

/**
 * The hold of a press or choice of a size (a radio or button labelled "S", "Size M") other
 * than the one the task asks for, when an element of the page is that size; undefined
 * otherwise. Letter sizes are too short for the task's words to tell them apart: a small
 * model pressed "S" for a task that said "size L".
 */
export function heldSize(task: string, observation: string, tool: string, args: unknown): { note: string; key: string } | undefined {
  const said = TASK_SIZE.exec(task)?.[1];
  const asked = said && asLetters(said);
  const index = (args as { index?: unknown } | undefined)?.index;
  if (!asked || typeof index !== 'number' || (tool !== 'click_element' && tool !== 'select_option')) return undefined;
  const all = observedElements(observation);
  const select = all.find((e) => e.index === index && e.role === 'select');
  const value = (args as { value?: unknown; label?: unknown }).label ?? (args as { value?: unknown }).value;
  if (select && tool === 'select_option' && typeof value === 'string') {
    const options = (OPTIONS_HINT.exec(select.line)?.[1] ?? '').split(' | ');
    const size = sizeOfLabel(value);
    const right = options.find((o) => sizeOfLabel(o) === asked);
    if (!size || size === asked || !right) return undefined;
    return { key: `size ${size}`, note: `${OPTION_HELD} size ${asked}, which is "${right}" of [${index}]; "${value}" is size ${size}. Choose "${right}" instead; if "${value}" is what the task means, choose it again.` };
  }
  const elements = all.filter((e) => ['radio', 'button', 'option', 'menuitemradio', 'tab'].includes(e.role));
  const chosen = elements.find((e) => e.index === index);
  const size = chosen && sizeOfLabel(chosen.label);
  const right = elements.find((e) => sizeOfLabel(e.label) === asked);
  if (!chosen || !size || size === asked || !right) return undefined;
  const again = tool === 'click_element' ? `press [${index}] again` : 'choose it again';
  return {
    key: `size ${size}`,
    note: `${OPTION_HELD} size ${asked}, which is [${right.index}] "${right.label}"; [${index}] "${chosen.label}" is size ${size}. Choose [${right.index}] instead; if [${index}] is what the task means, ${again}.`,
  };
}

/**
 * The note naming the element of the size the task asks for, while it is not chosen (not
 * pressed, checked or selected): the default model chose the colour the form's check named,
 * then pressed "Add to bag" again and again with no size, "L" a button of the page.
 */
export function sizeNote(task: string, observation: string): string | undefined {
  const said = TASK_SIZE.exec(task)?.[1];
  if (!said) return undefined;
  const asked = asLetters(said);
  const elements = observedElements(observation);
  const right = elements.find((e) => ['radio', 'button', 'option', 'menuitemradio'].includes(e.role) && sizeOfLabel(e.label) === asked);
  if (!right || hasState(right.line, ['pressed', 'checked', 'selected'])) return undefined;
  return `Note: the task asks for size ${asked}: [${right.index}] ${right.role} "${right.label}" is not chosen yet; press it.`;
}
