/**
 * A press whose index is not the element the agent's own words name: held once for that pair,
 * and the index of the named one said. The default model wrote "click the 'Save ticket'
 * button" and pressed [4], the option "Normal" of an open list, which set the priority back;
 * it wrote "click the 'Log in' button" and pressed [4], the link "Forgotten your PIN?".
 */
import { ELEMENT_PARTS, observedElements, readObservation, statesOf } from './observe/page-diff';

/** A press said in the words: click the 'Save ticket' button, press "Log in", tap on the "Next" link. */
const PRESS_NAMED = /\b(?:click|press|tap|hit)(?:ing|s)?\s+(?:on\s+)?(?:the\s+)?(?:[\w-]+\s+){0,2}?(?:'([^'\n]{2,60})'|"([^"\n]{2,60})"|“([^”\n]{2,60})”)/gi;
/** Words that make a press one of the steps after this one: "then click 'Save'". */
const LATER = /\b(?:then|after(?:wards)?|next|finally|before)\s+(?:\w+\s+){0,1}$/i;

/** How a held press of another element begins. */
export const MISINDEX_HELD = 'Not pressed: you wrote that you press';

const squeeze = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();

/** The labels the words say to press now (not as a later step). */
export function pressesNamed(words: string): string[] {
  const named: string[] = [];
  for (const m of words.matchAll(PRESS_NAMED)) {
    if (LATER.test(words.slice(Math.max(0, (m.index ?? 0) - 24), m.index))) continue;
    named.push((m[1] ?? m[2] ?? m[3]).trim());
  }
  return named;
}

/**
 * The note (and the index meant) when `index` is not the one element the words name to press, or undefined. The
 * words must name one label, held by exactly one element of the observation, and must not
 * name the pressed element's label anywhere. A toggle the `task` names (every word of its label
 * in it), not yet on, is pressed as chosen: the default model, told "Accept the terms of service … and press
 * Continue", wrote that it presses "Continue" and chose the terms box; held, it pressed
 * Continue, the box unticked, and the site refused the form.
 */
export function misindexed(words: string | undefined, observation: string, index: number, task = ''): { note: string; meant: number } | undefined {
  if (!words) return undefined;
  const named = [...new Set(pressesNamed(words).map(squeeze))];
  if (named.length !== 1) return undefined;
  const elements = [...readObservation(observation).elements.entries()].flatMap(([at, line]) => {
    const m = ELEMENT_PARTS.exec(line.trim());
    return m ? [{ index: at, role: m[2], label: m[3].replace(/\\(.)/g, '$1'), state: m[4] ?? '' }] : [];
  });
  const pressed = elements.find((e) => e.index === index);
  const matching = elements.filter((e) => squeeze(e.label) === named[0]);
  if (!pressed || matching.length !== 1 || matching[0].index === index || !pressed.label.trim()) return undefined;
  if (squeeze(words).includes(squeeze(pressed.label))) return undefined;
  if (TOGGLES.has(pressed.role) && !/\b(?:checked|pressed|selected)\b/.test(pressed.state) && namedBy(task, pressed.label)) return undefined;
  const meant = matching[0];
  const note = `${MISINDEX_HELD} "${meant.label}", which is [${meant.index}]; [${index}] is ${pressed.role} "${pressed.label}". To press "${meant.label}", call click_element with index ${meant.index}; if [${index}] is what you meant, press [${index}] again.`;
  return { note, meant: meant.index };
}

/** How a held press of an element the words do not name, while no element has the name they give, begins. */
export const ABSENT_HELD = 'Not pressed: no element of the page is named';
/** At most this many characters of the page's line are quoted. */
const MAX_QUOTED = 120;

/**
 * The note when the words name one label to press that no element of the observation has,
 * while a line of the page's text holds it with more (and the pressed element is not named
 * either), or undefined. The default model, the line "Jonas Berg Payroll 2615" in view and
 * quoted to it, wrote "I will click on the 'Payroll' link" and pressed "Intranet", three times.
 */
export function absentNamed(words: string | undefined, observation: string, index: number): string | undefined {
  if (!words) return undefined;
  const named = [...new Set(pressesNamed(words).map(squeeze))];
  if (named.length !== 1 || named[0].length < 3) return undefined;
  const labels = observedElements(observation);
  const pressed = labels.find((e) => e.index === index);
  if (!pressed || !pressed.label.trim() || squeeze(words).includes(squeeze(pressed.label))) return undefined;
  if (labels.some((e) => squeeze(e.label).includes(named[0]))) return undefined;
  const word = new RegExp(`(?<![\\p{L}\\p{N}])${named[0].replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}])`, 'iu');
  const line = readObservation(observation).text.find((l) => word.test(l) && squeeze(l).length > named[0].length + 2 && !/^(?:Note|Changed|Your task):/.test(l));
  if (!line) return undefined;
  const quoted = line.length > MAX_QUOTED ? `${line.slice(0, MAX_QUOTED - 1)}…` : line;
  return `${ABSENT_HELD} "${pressesNamed(words)[0]}"; [${index}] is ${pressed.role} "${pressed.label}". The page's text shows "${quoted}": if [${index}] is what you meant, press [${index}] again; if that text answers the task, call done with it.`;
}

/** Roles of an element pressed to turn something on or off, or to choose it. */
const TOGGLES = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);
/** Words too common to tell one label from another. */
const COMMON = new Set(['the', 'and', 'for', 'with', 'you', 'your', 'our', 'any', 'all', 'from', 'this', 'that', 'are', 'not', 'more', 'send', 'get', 'use', 'yes']);
/** The words of a label or task that tell one label from another (three letters or more, not common). */
export const wordsOf = (text: string) => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length >= 3 && !COMMON.has(w));
/** The words of the task's clauses that do not say no ("do not sign up for offers" asks for no offers). */
export function wordsAskedFor(task: string): Set<string> {
  const clauses = task.split(/[.;:,()!?]|\b(?:and|then|but)\b/i).filter((clause) => !/\b(?:no|not|never|without|don[’']?t|dont)\b/i.test(clause));
  return new Set(wordsOf(clauses.join(' ')));
}
/** Whether the text names a label: every word of it that tells labels apart is in the text (none: not named). */
export const namedBy = (text: string, label: string) => {
  const own = wordsOf(label);
  const words = new Set(wordsOf(text));
  return own.length > 0 && own.every((w) => words.has(w));
};
/** How a held press of a toggle the task does not name begins. */
export const UNNAMED_HELD = 'Not pressed: the task names';

/**
 * The note when `index` is a checkbox, radio or switch that neither the task nor the words
 * name (no word of its label in either), while exactly one other toggle of the page is named by
 * the task (every word of its label in it), or undefined. The default model, told to turn off
 * "Personalised ads", unticked it, wrote that it was still ticked and pressed "Face grouping",
 * then "Usage statistics". A radio the task names by one word of its label is named when no
 * toggle is named in full: told to check out "with Express shipping", the default model chose
 * "Express (1 day)", then "Standard (5 days)", in turn until it ended the task unsent.
 */
export function unnamedToggle(task: string, words: string | undefined, observation: string, index: number): string | undefined {
  const toggles = [...readObservation(observation).elements.entries()].flatMap(([at, line]) => {
    const m = ELEMENT_PARTS.exec(line.trim());
    return m && TOGGLES.has(m[2]) ? [{ index: at, role: m[2], label: m[3].replace(/\\(.)/g, '$1'), state: m[4] }] : [];
  });
  const pressed = toggles.find((t) => t.index === index);
  if (!pressed) return undefined;
  const taskWords = new Set(wordsOf(task));
  const said = new Set(wordsOf(words ?? ''));
  const own = wordsOf(pressed.label);
  // (a box the task names in a clause that says no, unchecked: a press would tick it. Told "do
  // not sign up for offers", the default model ticked "Send me special offers" for the terms)
  const naming = /\b(?:checked|selected|pressed)\b/.test(pressed.state ?? '') ? taskWords : wordsAskedFor(task);
  if (!own.length || own.some((w) => naming.has(w) || said.has(w))) return undefined;
  const fully = toggles.filter((t) => t.index !== index && namedBy(task, t.label));
  // a radio's label often says more than the task ("Express (1 day)" for "Express shipping"):
  // one word of it, when no toggle is named in full, among the radios listed next to the pressed one (its group)
  const radio = fully.length ? undefined : taskRadio(task, observation, index);
  const named = fully.length ? fully : toggles.filter((t) => t.index === radio?.index && t.index !== index);
  if (named.length !== 1) return undefined;
  const meant = named[0];
  const state = /\bchecked\b/.test(meant.state) ? 'checked now' : /\bselected\b|\bpressed\b/.test(meant.state) ? `${meant.state.trim()} now` : 'not checked now';
  const save = saveButton(observation, task);
  return `${UNNAMED_HELD} [${meant.index}] ${meant.role} "${meant.label}" (${state}), not [${index}] ${pressed.role} "${pressed.label}": pressing [${index}] changes what the task does not name. If [${meant.index}] is as the task wants, go on (${save ? `press ${save}` : 'a save or submit button'}); if the task needs [${index}] changed too, press it in a later step.`;
}

/** Labels of the buttons that save or send what was set. */
const SAVES = /^(?:save|apply|update|submit|confirm|done|ok|continue)\b/i;

/**
 * `[5] "Save preferences"`: the button of the observation that saves, or undefined. With the
 * task, where no button's label says so, the one button of two words or more (not pressed,
 * checked or disabled) that shares most words with the task: "Add to bag" for "…, in my bag".
 * (Told "Go on with the rest of the task" with Navy and L chosen, the default model waited,
 * typed "Navy L" and pressed L again before it found "Add to bag".)
 */
export function saveButton(observation: string, task = ''): string | undefined {
  const buttons = observedElements(observation).filter((e) => e.role === 'button' && !statesOf(e.line).has('disabled'));
  const save = buttons.find((e) => SAVES.test(e.label)) ?? taskButton(task, buttons);
  return save && `[${save.index}] "${save.label}"`;
}

function taskButton(task: string, buttons: ReturnType<typeof observedElements>): ReturnType<typeof observedElements>[number] | undefined {
  const taskWords = new Set(wordsOf(task));
  const scored = buttons
    .filter((e) => e.label.trim().split(/\s+/).length >= 2 && !['pressed', 'checked', 'selected'].some((s) => statesOf(e.line).has(s)))
    .map((e) => ({ e, shared: wordsOf(e.label).filter((w) => taskWords.has(w)).length }))
    .filter((s) => s.shared > 0)
    .sort((a, b) => b.shared - a.shared);
  return scored.length && (scored.length === 1 || scored[0].shared > scored[1].shared) ? scored[0].e : undefined;
}

/**
 * The radio of the group of the radio at `index` that the task names (every word of its label,
 * or, when none is named so, one word of it), when exactly one is, with whether it is checked.
 */
export function taskRadio(task: string, observation: string, index: number): { index: number; label: string; checked: boolean } | undefined {
  const group = radioGroup(observation, index);
  const radios = observedElements(observation).filter((e) => group.has(e.index));
  const taskWords = new Set(wordsOf(task));
  const fully = radios.filter((r) => namedBy(task, r.label));
  const named = fully.length ? fully : radios.filter((r) => wordsOf(r.label).some((w) => taskWords.has(w)));
  if (named.length !== 1) return undefined;
  return { index: named[0].index, label: named[0].label, checked: statesOf(named[0].line).has('checked') };
}

/** The indexes of the radios listed in an unbroken run with the radio at `index` (its group, as far as the list tells); none when it is no radio. */
export function radioGroup(observation: string, index: number): Set<number> {
  const elements = observedElements(observation);
  const at = elements.findIndex((e) => e.index === index && e.role === 'radio');
  let [first, last] = [at, at];
  while (first > 0 && elements[first - 1].role === 'radio') first -= 1;
  while (last < elements.length - 1 && elements[last + 1].role === 'radio') last += 1;
  return new Set(at < 0 ? [] : elements.slice(first, last + 1).map((e) => e.index));
}

/** Whether the words quote texts other than the page's labels, none of them `text`. */
function quotesOtherText(words: string, text: string, observation: string): boolean {
  const labels = new Set(observedElements(observation).map((e) => squeeze(e.label)));
  const quoted = [...words.matchAll(/(?<![\p{L}])'([^'\n]{2,80})'(?![\p{L}])|"([^"\n]{2,80})"/gu)].map((m) => squeeze(m[1] ?? m[2])).filter((q) => !labels.has(q));
  return quoted.length > 0 && !quoted.includes(squeeze(text));
}

/** A field the words say to type into: "into the message field", "in the 'E-mail' box". */
const FIELD_NAMED = /\b(?:into|in|to)\s+the\s+(?:'([^'\n]{2,40})'|"([^"\n]{2,40})"|([\p{L}][\p{L}\d -]{1,30}?))\s+(?:field|box|textbox|input)\b/giu;
/** How a held typing into another field begins. */
export const MISTYPED_HELD = 'Not typed: you wrote that you type into';

/**
 * The note when `index` is not the one field the words name to type into (by its label), or
 * undefined. The default model wrote "I need to type 'Please send my invoice' into the
 * message field" and typed it into [2] "Email", five times. Words that quote texts, none of
 * them the `text` typed, speak of another typing ("the next step is to type 'Please send my
 * invoice' into the message field", while typing the e-mail into [2] "Email"): not held.
 */
export function mistypedInto(words: string | undefined, observation: string, index: number, text?: string): { note: string; meant: number } | undefined {
  if (!words) return undefined;
  const named = [...new Set([...words.matchAll(FIELD_NAMED)].map((m) => squeeze(m[1] ?? m[2] ?? m[3])))];
  if (named.length !== 1) return undefined;
  const fields = observedElements(observation).filter((e) => ['textbox', 'searchbox', 'combobox', 'spinbutton'].includes(e.role));
  if (text !== undefined && quotesOtherText(words, text, observation)) return undefined;
  const typed = fields.find((e) => e.index === index);
  const matching = fields.filter((e) => squeeze(e.label) === named[0] || squeeze(e.label).replace(/[^\p{L}\d ]+/gu, '') === named[0]);
  if (!typed || matching.length !== 1 || matching[0].index === index || named[0].includes(squeeze(typed.label))) return undefined;
  const meant = matching[0];
  return {
    meant: meant.index,
    note: `${MISTYPED_HELD} "${meant.label}", which is [${meant.index}]; [${index}] is ${typed.role} "${typed.label}". To type there, call input_text with index ${meant.index}; if [${index}] is what you meant, type into [${index}] again.`,
  };
}

/** Tools that press nothing, called while the words say to press an element. */
const NO_PRESS_TOOLS = new Set(['scroll', 'wait', 'send_keys', 'go_back']);
/** A press by index in the words: "press [7]", "click on [12]". */
const PRESS_INDEX = /\b(?:click|press|tap|hit)(?:ing|s)?\s+(?:on\s+)?(?:the\s+)?(?:[\w-]+\s+)?\[(\d+)\]/gi;

/** How a held action that presses nothing, the words saying to press an element, begins. */
export const NO_PRESS_HELD = 'Not done: you wrote that you press';

/**
 * The note (and the element meant) when a tool that presses nothing is called while the
 * words say to press one element of the page, by its index or its name, or undefined. The
 * default model wrote "Press [7] button 'Next month' to show later ones" and scrolled, then
 * waited, on a calendar three months short of the task's date.
 */
export function pressNotMade(words: string | undefined, observation: string, tool: string): { note: string; meant: number } | undefined {
  if (!words || !NO_PRESS_TOOLS.has(tool)) return undefined;
  const elements = observedElements(observation);
  const byIndex = [...new Set([...words.matchAll(PRESS_INDEX)].filter((m) => !LATER.test(words.slice(Math.max(0, (m.index ?? 0) - 24), m.index))).map((m) => Number(m[1])))];
  const named = [...new Set(pressesNamed(words).map(squeeze))];
  const found = byIndex.length === 1 ? elements.filter((e) => e.index === byIndex[0]) : byIndex.length ? [] : named.length === 1 ? elements.filter((e) => squeeze(e.label) === named[0]) : [];
  if (found.length !== 1) return undefined;
  const [meant] = found;
  return {
    note: `${NO_PRESS_HELD} [${meant.index}] ${meant.role} "${meant.label}", and called ${tool}, which presses nothing. To press it, call click_element with index ${meant.index}; if ${tool} is what you meant, call it again.`,
    meant: meant.index,
  };
}

/** How a held press of another element of the name a note said to press begins. */
export const TWIN_HELD = 'Not pressed: the note said to press';

/**
 * The note when `index` is not among the presses the last observation's notes advised while
 * one of those has the same role and label ("See availability" of another line), or undefined:
 * told "the lowest is on the line "€71 a night · See availability". Press [7]", the default
 * model pressed [11], the "See availability" of a dearer stay, and answered with its check-in.
 */
export function twinOfAdvised(advised: ReadonlySet<number>, observation: string, index: number): string | undefined {
  if (advised.has(index)) return undefined;
  const elements = observedElements(observation);
  const pressed = elements.find((e) => e.index === index);
  if (!pressed || !pressed.label.trim()) return undefined;
  const twin = elements.find((e) => advised.has(e.index) && e.role === pressed.role && e.label === pressed.label);
  if (!twin) return undefined;
  return `${TWIN_HELD} [${twin.index}] ${twin.role} "${twin.label}"; [${index}] is another ${pressed.role} of that name, on another line of the page. Press [${twin.index}]; if [${index}] is what you meant, press [${index}] again.`;
}
