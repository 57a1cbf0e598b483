/**
 * What changed between two observations (their text as composed for the model): whether a
 * page changed beyond the elements acted on (an action list stops there), and the short
 * "Changed:" line the next observation opens with.
 */
import { REST_OF_PAGE } from './compose';

/** An observation read back into its parts. */
export interface ObservedPage {
  url: string;
  title: string;
  tabs: number;
  modal?: string;
  /** Element lines by index. */
  elements: Map<number, string>;
  /** The visible text's lines. */
  text: string[];
}

const ELEMENT_LINE = /^\[(\d+)\] /;
/** An element line's parts: `[4] select "City" value="Paris"` gives 4, select, City, and the rest. */
export const ELEMENT_PARTS = /^\[(\d+)\] (\S+) "((?:[^"\\]|\\.)*)"(.*)$/;
/** `[index] role "label"`: what an element is, without its state hints. */
const ELEMENT_KEY = /^\[\d+\] [^"\s]+(?: "(?:[^"\\]|\\.)*")?/;
/** The options an element line lists (` options="A | B"`). */
export const OPTIONS_HINT = /\boptions="((?:[^"\\]|\\.)*)"/;
/** The quoted value an element line shows (` value="…"`). */
export const VALUE_HINT = / value=("(?:[^"\\]|\\.)*")/;
const MODAL = /^A modal dialog is open \("(.*)"\)/;
const MAX_SHOWN = 80;
const MAX_TEXT_LINES = 2;

/** Reads an observation's text back into its parts. */
export function readObservation(text: string): ObservedPage {
  const page: ObservedPage = { url: '', title: '', tabs: 0, elements: new Map(), text: [] };
  let inText = false;
  for (const line of text.split('\n')) {
    if (inText) {
      if (line && !line.startsWith('(') && line !== REST_OF_PAGE) page.text.push(line);
      continue;
    }
    if (line === 'Visible text:') inText = true;
    else if (line.startsWith('URL: ')) page.url = line.slice(5);
    else if (line.startsWith('Title: ')) page.title = line.slice(7);
    else if (line.startsWith('Tabs: ')) page.tabs = line.split(' | ').length;
    else if (MODAL.test(line)) page.modal = MODAL.exec(line)![1];
    else {
      const index = ELEMENT_LINE.exec(line);
      if (index) page.elements.set(Number(index[1]), line);
    }
  }
  return page;
}

/** An element of an observation: its index, role, label (unescaped) and whole line. */
export interface ObservedElement {
  index: number;
  role: string;
  label: string;
  line: string;
}

/** The elements of an observation, in its order. */
export function observedElements(observation: string): ObservedElement[] {
  return [...readObservation(observation).elements.entries()].flatMap(([index, line]) => {
    const m = ELEMENT_PARTS.exec(line.trim());
    return m ? [{ index, role: m[2], label: m[3].replace(/\\(.)/g, '$1'), line }] : [];
  });
}

/** The role an element line gives (`option` of `[5] option "High"`), or undefined. */
const roleOfLine = (line: string | undefined) => (line === undefined ? undefined : ELEMENT_PARTS.exec(line.trim())?.[2]);

/** What an element is, without its state (its value, checked, disabled...). */
export function elementKey(line: string): string {
  return ELEMENT_KEY.exec(line)?.[0] ?? line;
}

/** What an element is, without its index or state: `button "Add to cart"`. */
export function elementName(line: string): string {
  return elementKey(line).replace(/^\[\d+\] /, '');
}

/** Whether an element's line, its quoted label and hints left out, carries one of `states` ("checked", "pressed"...). */
export function hasState(line: string, states: readonly string[]): boolean {
  const bare = line.replace(/"(?:[^"\\]|\\.)*"/g, '');
  return new RegExp(`\\b(?:${states.join('|')})\\b`).test(bare);
}

/**
 * How the page changed from `before` beyond the elements at `acted` (whose values the actions
 * set): another address or title, a new tab, a dialog, elements that appeared or went away.
 * Undefined when it did not. An option of an open list chosen closes the list and shows the
 * choice in its field: neither is a change (the default model, the list stopped there, opened
 * the list and chose the same option again for 16 steps, the ticket never saved).
 */
export function pageChange(before: string, after: string, acted: readonly number[]): string | undefined {
  const was = readObservation(before);
  const now = readObservation(after);
  if (now.url !== was.url) return `the address changed to ${clip(now.url)}`;
  if (now.tabs > was.tabs) return 'a new tab opened';
  if (now.title !== was.title) return `the title changed to "${clip(now.title)}"`;
  if (now.modal !== was.modal) return now.modal === undefined ? 'the dialog closed' : `a dialog opened ("${clip(now.modal)}")`;
  const skip = new Set(acted);
  if (acted.some((index) => roleOfLine(was.elements.get(index)) === 'option')) {
    for (const [index, line] of was.elements) if (roleOfLine(line) === 'option' || roleOfLine(now.elements.get(index)) === roleOfLine(line)) skip.add(index);
  }
  const keys = (page: ObservedPage) => new Set([...page.elements].filter(([index]) => !skip.has(index)).map(([, line]) => elementKey(line)));
  const [old, fresh] = [keys(was), keys(now)];
  const appeared = [...fresh].filter((key) => !old.has(key)).length;
  const gone = [...old].filter((key) => !fresh.has(key)).length;
  if (!appeared && !gone) return undefined;
  return [appeared ? `${appeared} element${appeared === 1 ? '' : 's'} appeared` : '', gone ? `${gone} element${gone === 1 ? '' : 's'} went away` : ''].filter(Boolean).join(' and ');
}

/**
 * The "Changed:" line after actions on the elements at `acted`: the address or title, the
 * value an acted field now holds, a dialog, text that appeared or went away, or that nothing
 * visible changed.
 */
export function changeSummary(before: string, after: string, acted: readonly number[]): string {
  const was = readObservation(before);
  const now = readObservation(after);
  const parts: string[] = [];
  // a link to a place on the same page ("#breads"): only the address's end changes, and a
  // small model read the new address as a new page, pressing the page's own links for 9 steps
  const samePage = now.url !== was.url && withoutFragment(now.url) === withoutFragment(was.url);
  const place = now.url.slice(withoutFragment(now.url).length);
  if (samePage) parts.push(place ? `only the URL's #part is now ${clip(place)} (a place on this same page)` : "only the URL's #part went away (the same page)");
  else if (now.url !== was.url) parts.push(`URL is now ${clip(now.url)}`);
  if (now.title !== was.title) parts.push(`title is now "${clip(now.title)}"`);
  if (now.tabs !== was.tabs) parts.push(now.tabs > was.tabs ? 'a new tab opened' : 'a tab closed');
  if (now.modal !== was.modal) parts.push(now.modal === undefined ? 'the dialog closed' : `a dialog opened ("${clip(now.modal)}")`);
  if (now.url === was.url || samePage) {
    const rest = [...valueChanges(was, now, acted), ...stateChanges(was, now, acted), ...optionsShown(was, now), ...textChanges(was, now)];
    if (samePage && !rest.length && parts.length === 1) rest.push('nothing visible changed');
    parts.push(...rest);
  }
  return parts.length ? `Changed: ${parts.join('; ')}` : NOTHING_CHANGED;
}

/** The change line after an action that changed nothing the observation shows. */
export const NOTHING_CHANGED = 'Changed: nothing visible changed';

/**
 * Whether a change line says that nothing visible changed: a jump to a place on a page whose
 * text stayed the same included (the default model pressed "Home" and "Breads", two links to
 * places of the page it saw whole, by turns until its time ran out).
 */
export function nothingVisible(line: string): boolean {
  return line === NOTHING_CHANGED || (line.startsWith("Changed: only the URL's #part ") && line.endsWith('; nothing visible changed'));
}

/** An observation with the #part of its address left out: the same page at any of its places. */
export function pageWithoutPlace(text: string): string {
  const url = readObservation(text).url;
  const base = withoutFragment(url);
  return url === base ? text : text.split(url).join(base);
}

/** An address without its #part. */
function withoutFragment(url: string): string {
  const hash = url.indexOf('#');
  return hash < 0 ? url : url.slice(0, hash);
}

/** The values acted fields hold now, when they changed. */
function valueChanges(was: ObservedPage, now: ObservedPage, acted: readonly number[]): string[] {
  const changes: string[] = [];
  for (const index of new Set(acted)) {
    const line = now.elements.get(index);
    if (!line) {
      if (was.elements.has(index)) changes.push(`[${index}] went away`);
      continue;
    }
    const value = VALUE_HINT.exec(line)?.[1];
    const before = was.elements.get(index);
    if (before !== undefined && VALUE_HINT.exec(before)?.[1] === value) continue;
    changes.push(value ? `[${index}] now holds ${clip(value)}` : `[${index}] is now empty`);
  }
  // a field the action filled through another element (an option of its list chosen: the
  // combobox's new value went unsaid, and the default model typed the city again)
  let others = 0;
  for (const [index, line] of now.elements) {
    const before = was.elements.get(index);
    if (acted.includes(index) || before === undefined || others >= MAX_OTHER_VALUES) continue;
    const value = VALUE_HINT.exec(line)?.[1];
    if (value === undefined || VALUE_HINT.exec(before)?.[1] === value) continue;
    changes.push(`[${index}] now holds ${clip(value)}`);
    others += 1;
  }
  return changes;
}

/** At most this many fields the action did not act on are said to hold a new value. */
const MAX_OTHER_VALUES = 2;

/** The state words an element line may end with (see the observation's hints). */
const STATES = ['checked', 'mixed', 'pressed', 'selected', 'expanded', 'collapsed', 'disabled', 'invalid'] as const;
const MAX_STATE_CHANGES = 3;
/** States a second press of the same element takes back. */
const TOGGLED = new Set(['checked', 'pressed']);
/** Elements a second press sets back (a radio pressed again stays checked). */
const TOGGLES = new Set(['checkbox', 'switch', 'menuitemcheckbox', 'button']);

/** The state words an element's observation line ends with (checked, disabled...). */
export function statesOf(line: string): Set<string> {
  const hints = line.slice(elementKey(line).length).replace(/\w+="(?:[^"\\]|\\.)*"/g, ' ').split(/\s+/);
  return new Set(hints.filter((word) => (STATES as readonly string[]).includes(word)));
}

/**
 * Elements still on the page whose state changed (a radio now checked, the one before no
 * longer, a menu now expanded): the acted ones first, a few at most.
 */
function stateChanges(was: ObservedPage, now: ObservedPage, acted: readonly number[]): string[] {
  const first = new Set(acted);
  const order = [...now.elements.keys()].sort((a, b) => Number(!first.has(a)) - Number(!first.has(b)));
  const changes: string[] = [];
  for (const index of order) {
    const [before, after] = [was.elements.get(index), now.elements.get(index)!];
    if (before === undefined || elementKey(before) !== elementKey(after)) continue;
    const [old, fresh] = [statesOf(before), statesOf(after)];
    const name = `[${index}]${/ "(?:[^"\\]|\\.)*"$/.exec(elementKey(after))?.[0] ?? ''}`;
    const gained = [...fresh].filter((state) => !old.has(state));
    const lost = [...old].filter((state) => !fresh.has(state) && !(state === 'collapsed' && fresh.has('expanded')) && !(state === 'expanded' && fresh.has('collapsed')));
    // (a toggle the agent just pressed: a small model pressed it again and again)
    const toggle = TOGGLES.has(/^\[\d+\] (\S+)/.exec(after)?.[1] ?? '');
    const undo = toggle && first.has(index) && [...gained, ...lost].some((state) => TOGGLED.has(state)) ? ' (pressing it again undoes this)' : '';
    if (gained.length) changes.push(`${name} is now ${gained.join(', ')}${lost.length ? '' : undo}`);
    if (lost.length) changes.push(`${name} is no longer ${lost.join(', ')}${undo}`);
  }
  return changes.length > MAX_STATE_CHANGES ? [...changes.slice(0, MAX_STATE_CHANGES), `${changes.length - MAX_STATE_CHANGES} more elements changed state`] : changes;
}

/** Options listed after the actions that were not before, named (a few at most). */
const MAX_OPTIONS_SHOWN = 4;

/**
 * The options a list now shows (a combobox's suggestions after typing), by index and name.
 * The default model, "[2] "To" is now expanded" after typing "York", waited and pressed Enter
 * instead of the option "York (YRK)" that had appeared.
 */
function optionsShown(was: ObservedPage, now: ObservedPage): string[] {
  const old = new Set([...was.elements.values()].map(elementKey));
  const fresh = [...now.elements.entries()].filter(([, line]) => /^\[\d+\] option "/.test(line) && !old.has(elementKey(line)));
  if (!fresh.length) return [];
  const named = fresh.slice(0, MAX_OPTIONS_SHOWN).map(([index, line]) => `[${index}]${/ "(?:[^"\\]|\\.)*"$/.exec(elementKey(line))?.[0] ?? ''}`);
  const more = fresh.length > MAX_OPTIONS_SHOWN ? ` and ${fresh.length - MAX_OPTIONS_SHOWN} more` : '';
  return [`option${fresh.length === 1 ? '' : 's'} appeared to choose from: ${named.join(', ')}${more} (press the one you mean)`];
}

/** The visible text lines of `after` that `before` did not show. */
export function appearedText(before: string, after: string): string[] {
  const old = new Set(readObservation(before).text);
  return readObservation(after).text.filter((line) => !old.has(line)).map(clip);
}

/** Text lines that appeared or went away (a few, clipped). */
function textChanges(was: ObservedPage, now: ObservedPage): string[] {
  const old = new Set(was.text);
  const fresh = new Set(now.text);
  const appeared = now.text.filter((line) => !old.has(line));
  const gone = was.text.filter((line) => !fresh.has(line));
  const quoted = (lines: string[]) => lines.slice(0, MAX_TEXT_LINES).map((line) => `"${clip(line)}"`).join(', ') + (lines.length > MAX_TEXT_LINES ? ` and ${lines.length - MAX_TEXT_LINES} more line${lines.length - MAX_TEXT_LINES === 1 ? '' : 's'}` : '');
  const changes: string[] = [];
  if (appeared.length) changes.push(`text appeared: ${quoted(appeared)}`);
  if (gone.length) changes.push(`text went away: ${quoted(gone)}`);
  return changes;
}

function clip(text: string): string {
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 1)}…` : text;
}
