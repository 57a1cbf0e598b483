/**
 * A wrong tool answered with the right one: what the failed action would need, and which
 * tool or index of the latest observation fits.
 */
import { hasState, observedElements, OPTIONS_HINT, readObservation } from './observe/page-diff';
import { indexOf } from './tools/fields';

const FIELD_ROLES = /^\[\d+\] (textbox|searchbox|combobox|spinbutton)\b/;
const ROLE = /^\[\d+\] (\S+)/;
const MAX_LISTED = 6;

/** The hint for a failed action, or undefined when the failure names no better tool. */
export function rightToolHint(tool: string, args: unknown, reason: string, observation: string | undefined): string | undefined {
  if (tool === 'send_keys' && /unknown key/i.test(reason)) {
    const keys = (args as { keys?: string }).keys ?? '';
    return `"${keys}" is not a key: send_keys presses keys such as Enter, Tab or Escape. To type text into a field, call input_text with the field's index; to answer the task with this text, call done with it.`;
  }
  if (tool === 'input_text' && /not an <input>|not editable|is a select|not an input/i.test(reason)) {
    const index = indexOf(args);
    const page = readObservation(observation ?? '');
    const role = index === undefined ? undefined : ROLE.exec(page.elements.get(index) ?? '')?.[1];
    if (role === 'select' || role === 'combobox' || role === 'listbox' || role === 'radio') return `[${index}] is a ${role}: choose its option with select_option.`;
    const fields = [...page.elements.values()].filter((line) => FIELD_ROLES.test(line) && !/ (disabled|readonly)\b/.test(line)).map((line) => `[${/^\[(\d+)\]/.exec(line)![1]}]`);
    const what = role ? `[${index}] is a ${role}, not a field` : `[${index}] is not a field`;
    if (!fields.length) return `${what}, and the page shows no text field: to answer, call done with the text; to press it, call click_element.`;
    return `${what}: the fields are ${list(fields.slice(0, MAX_LISTED))}${fields.length > MAX_LISTED ? ` and ${fields.length - MAX_LISTED} more` : ''}.`;
  }
  if (tool === 'select_option' && /has no option/i.test(reason)) return otherChoiceHint(args, observation);
  return undefined;
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();

/**
 * The other choice of the page that has the option asked for in one that has not: the
 * default model chose "Swiss franc (CHF)" in "Language" twice, then gave up, the currency
 * select the next line down.
 */
function otherChoiceHint(args: unknown, observation: string | undefined): string | undefined {
  const { value, label } = (args ?? {}) as { value?: unknown; label?: unknown };
  const wanted = normalize(String(value ?? label ?? ''));
  const index = indexOf(args);
  if (!wanted) return undefined;
  const other = observedElements(observation ?? '').find((e) => {
    const options = OPTIONS_HINT.exec(e.line)?.[1].split(' | ').map(normalize) ?? [];
    return e.index !== index && options.some((option) => option === wanted || (wanted.length >= 3 && option.includes(wanted)));
  });
  if (other) return `"${String(value ?? label)}" is an option of [${other.index}] ${other.role} "${other.label}": choose it there, with index ${other.index}.`;
  return pressableHint(String(value ?? label), wanted, index, observation);
}

const PRESSABLE = new Set(['button', 'radio', 'option', 'tab', 'link', 'menuitem', 'menuitemradio', 'checkbox', 'switch']);

/**
 * The element labelled with the option asked for, when the page has exactly one other that
 * a press chooses: the default model chose "L" in the colour radios until the task failed,
 * the sizes the page's buttons "S", "M", "L", "XL".
 */
function pressableHint(asked: string, wanted: string, index: number | undefined, observation: string | undefined): string | undefined {
  const labelled = observedElements(observation ?? '').filter((e) => e.index !== index && PRESSABLE.has(e.role) && normalize(e.label) === wanted);
  if (labelled.length !== 1) return undefined;
  const [element] = labelled;
  // (pressed already: the default model, "L" pressed, chose "L" in the colour radios three times)
  if (hasState(element.line, ['pressed', 'checked', 'selected'])) return `"${asked}" is not an option there: it is [${element.index}] ${element.role} "${element.label}" of the page, chosen already. Go on with the rest of the task.`;
  return `"${asked}" is not an option there: it is [${element.index}] ${element.role} "${element.label}" of the page; press it with click_element, index ${element.index}.`;
}

function list(items: string[]): string {
  return items.length === 1 ? items[0] : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
