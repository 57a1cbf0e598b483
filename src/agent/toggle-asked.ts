/**
 * A checkbox or switch the task names and says which way to set ("turn off personalised ads"):
 * once it is set that way, the next observation says so with the button that saves it, and a
 * press that would set it back is held once per toggle. The default model unticked
 * "Personalised ads", read "unchecked", wrote "I will click it to turn it off", and pressed it
 * and the other boxes in turn for 16 steps.
 */
import { radioGroup, saveButton, taskRadio, wordsAskedFor, wordsOf } from './index-check';
import { observedElements, statesOf } from './observe/page-diff';

export type ToggleState = 'checked' | 'unchecked';

const OFF = /\b(?:turn|switch|toggle|set)\s+(?:[\w'’-]+\s+){0,4}?off\b|\b(?:disable|deactivate|untick|uncheck|unselect|deselect|unsubscribe)\b|\bopt(?:ing)?\s+out\b|\bstop\s+\w+ing\b/i;
const ON = /\b(?:turn|switch|toggle|set)\s+(?:[\w'’-]+\s+){0,4}?on\b|\b(?:enable|activate|tick|subscribe)\b|\bopt(?:ing)?\s+in\b/i;
const TOGGLES = new Set(['checkbox', 'switch', 'menuitemcheckbox']);

/** Which way the task sets the toggles it names, or undefined when it says neither or both. */
export function askedToggleState(task: string): ToggleState | undefined {
  const off = OFF.test(task);
  const on = ON.test(task);
  return off === on ? undefined : off ? 'unchecked' : 'checked';
}

interface Toggle {
  index: number;
  role: string;
  label: string;
  state: ToggleState;
}

/** The toggles of the observation the task names (every word of the label in it). */
function namedToggles(task: string, observation: string): Toggle[] {
  const taskWords = new Set(wordsOf(task));
  return observedElements(observation).flatMap(({ index, role, label, line }) => {
    const words = wordsOf(label);
    if (!TOGGLES.has(role) || !words.length || !words.every((w) => taskWords.has(w))) return [];
    return [{ index, role, label, state: statesOf(line).has('checked') ? ('checked' as const) : ('unchecked' as const) }];
  });
}

const asAsked = (state: ToggleState) => (state === 'unchecked' ? 'off (unchecked)' : 'on (checked)');

/**
 * The note after actions on `acted`: a named toggle they set the way the task asks. `pending`:
 * another note still asks for a choice (the size not chosen yet), so no button is named next.
 */
export function toggleSetNote(task: string, observation: string, acted: readonly number[], pending = false): string | undefined {
  // a radio the task names, chosen: the default model, "Standard" just chosen, pressed "Basic" and "Standard" in turn for 18 steps
  // (with no save button the note does not say the task may be done: told so with "Navy" chosen,
  // the default model left the size the task asked for unchosen)
  const radio = acted.map((index) => taskRadio(task, observation, index)).find((r) => r?.checked && acted.includes(r.index));
  if (radio) {
    const save = pending ? undefined : saveButton(observation, task);
    return `Note: [${radio.index}] radio "${radio.label}" is now chosen, as the task asks; pressing another radio would undo that. ${save ? `If nothing else is asked, press ${save} next.` : 'Go on with the rest of the task.'}`;
  }
  const asked = askedToggleState(task);
  if (!asked) return undefined;
  const set = namedToggles(task, observation).find((t) => acted.includes(t.index) && t.state === asked);
  if (!set) return undefined;
  const save = pending ? undefined : saveButton(observation, task);
  return `Note: [${set.index}] ${set.role} "${set.label}" is now ${asAsked(asked)}, as the task asks; pressing it again would undo that. ${save ? `Press ${save} to save it.` : 'Go on with the rest of the task.'}`;
}

/** How a held press that would set a toggle back begins. */
export const TOGGLE_HELD = 'Not pressed: it is already';

/** The hold of a press of a named toggle already set the way the task asks, or undefined. */
export function toggleBack(task: string, observation: string, index: number): string | undefined {
  const asked = askedToggleState(task);
  if (!asked) return undefined;
  const toggle = namedToggles(task, observation).find((t) => t.index === index);
  if (!toggle || toggle.state !== asked) return undefined;
  const save = saveButton(observation, task);
  return `${TOGGLE_HELD} as the task asks: [${index}] ${toggle.role} "${toggle.label}" is ${asAsked(asked)}, and pressing it would set it back. ${save ? `Press ${save} to save it` : 'Go on with the rest of the task'}; if it must be pressed anyway, press [${index}] again.`;
}

/** Whether a toggle the task names is set the way it asks (then a press of another is held again). */
export function namedToggleSet(task: string, observation: string): boolean {
  const asked = askedToggleState(task);
  return !!asked && namedToggles(task, observation).some((t) => t.state === asked);
}

/** The toggles of the observation no word of whose label the task has (kept out of the next answer after a hold). */
export function togglesNotNamed(task: string, observation: string): number[] {
  const taskWords = new Set(wordsOf(task));
  return observedElements(observation)
    .filter((e) => TOGGLES.has(e.role) && !statesOf(e.line).has('disabled') && !wordsOf(e.label).some((w) => taskWords.has(w)))
    .map((e) => e.index);
}

/**
 * `"Personalised ads" off (unchecked)`: the toggles the task names, when the observation shows
 * every one of them set the way it asks; undefined otherwise. Said of the page a form was sent
 * from: the default model, its choice saved, read the saved page's "Back to privacy settings",
 * went back to the form drawn anew and saved it with the box ticked again.
 */
export function togglesSetAsAsked(task: string, observation: string): string | undefined {
  const asked = askedToggleState(task);
  const named = asked ? namedToggles(task, observation) : [];
  if (!asked || !named.length || named.some((t) => t.state !== asked)) return undefined;
  return `${named.map((t) => `"${t.label}"`).join(', ')} ${asAsked(asked)}`;
}

/** How a held leave of the page a form was sent to, its toggles as asked, begins. */
export const SENT_LEAVE_HELD = 'Not done: the form was sent';

/**
 * The hold of a leave of the page the form was just sent to, or undefined: go_back or
 * navigate after any form (`sentWith` ''), a link too after one sent with the toggles the
 * task names as it asks (a link may lead on to what the task reads after signing in). The
 * default model, told its application was sent, navigated back to the form and filled it
 * again.
 */
export function sentLeaveNote(sentWith: string, tool: string, role: string | undefined, index: number | undefined): string | undefined {
  const leaves = tool === 'go_back' || tool === 'navigate' || (tool === 'click_element' && role === 'link' && sentWith !== '');
  if (!leaves) return undefined;
  const again = tool === 'click_element' ? `press [${index}] again` : `call ${tool} again`;
  const how = sentWith ? ` with ${sentWith}, as the task asks,` : '';
  return `${SENT_LEAVE_HELD}${how} and this page is what it opened: the form needs nothing more. If the task asks for nothing more, call done; to leave anyway, ${again}.`;
}

/**
 * The note naming the radio the task names (every word of its label, in a clause that does not
 * say no) while it is not chosen, or undefined: the default model, told the jacket was "in navy,
 * size L", pressed L, wrote that it was navy, and sent the form with "Olive" chosen.
 */
export function radioToChooseNote(task: string, observation: string): string | undefined {
  const asked = wordsAskedFor(task);
  const elements = observedElements(observation);
  const seen = new Set<number>();
  for (const element of elements) {
    if (element.role !== 'radio' || seen.has(element.index)) continue;
    const group = radioGroup(observation, element.index);
    for (const index of group) seen.add(index);
    const radios = elements.filter((r) => group.has(r.index));
    const named = radios.filter((r) => wordsOf(r.label).length > 0 && wordsOf(r.label).every((w) => asked.has(w)));
    if (named.length !== 1 || statesOf(named[0].line).has('checked')) continue;
    const chosen = radios.find((r) => statesOf(r.line).has('checked'));
    return `Note: the task asks for [${named[0].index}] radio "${named[0].label}": it is not chosen yet${chosen ? ` ([${chosen.index}] "${chosen.label}" is)` : ''}; press [${named[0].index}].`;
  }
  return undefined;
}
