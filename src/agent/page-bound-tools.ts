import { ELEMENT_LABELS } from '../model/answer-format';
import { WHOLE_PAGE } from './observe/compose';
import { statesOf, VALUE_HINT } from './observe/page-diff';
import type { LlmToolSpec } from './llm/types';

/** The element indexes an observation lists (its lines `[n] role "label"`). */
export function observedIndexes(observation: string): number[] {
  return [...observation.matchAll(/^\s*\[(\d+)\]/gm)].map((match) => Number(match[1]));
}

/** The elements an observation lists: their label (or role when they have none) by index. */
export function observedLabels(observation: string): Record<number, string> {
  const labels: Record<number, string> = {};
  for (const match of observation.matchAll(/^\s*\[(\d+)\] (\S+)(?: "((?:[^"\\]|\\.)*)")?/gm)) labels[Number(match[1])] = (match[3] ?? '').replace(/\\(.)/g, '$1') || match[2];
  return labels;
}

/** The element lines of an observation: index, role and the whole line (its states at its end). */
function elementLines(observation: string): { index: number; role: string; line: string }[] {
  return [...observation.matchAll(/^\s*\[(\d+)\] (\S+).*$/gm)].map((match) => ({ index: Number(match[1]), role: match[2], line: match[0].trim() }));
}

/** The tab indexes of the observation's `Tabs:` line. */
export function observedTabs(observation: string): number[] {
  return tabsOf(observation).map((tab) => tab.index);
}

/** The index of the active tab, if the observation lists tabs. */
export function activeTab(observation: string): number | undefined {
  return tabsOf(observation).find((tab) => tab.active)?.index;
}

/** The tabs a switch can go to: all but the active one (a small model switched to the tab it was on eight times, the answer in view). */
export function otherTabs(observation: string): number[] {
  return tabsOf(observation)
    .filter((tab) => !tab.active)
    .map((tab) => tab.index);
}

/**
 * The other tabs that show a page of this title: going back and forth between a page and a
 * price list opened in a new tab, the default model switched between the two tabs until its
 * steps ran out, the price asked for shown on one of them.
 */
export function tabsTitled(observation: string, title: string): number[] {
  return title ? tabsOf(observation).filter((tab) => !tab.active && tab.title && title.startsWith(tab.title.replace(/…$/, ''))).map((tab) => tab.index) : [];
}

/** The observation's `Tabs:` line read: a title may hold " | " itself, so a tab runs from its [index] to the next tab's. */
function tabsOf(observation: string): { index: number; active: boolean; title: string }[] {
  const line = /^Tabs: (.*)$/m.exec(observation)?.[1] ?? '';
  return [...line.matchAll(/\[(\d+)\] (.*?)(?= \| \[\d+\] |$)/g)].map((match) => ({ index: Number(match[1]), active: match[2].endsWith(' (active)'), title: match[2].replace(/ \(active\)$/, '') }));
}

/**
 * The tools with their element (and tab) indexes bound to what the latest observation lists:
 * `index` becomes an enum of those indexes, so a model whose answers follow the schema (the
 * local model's grammar) cannot name an element that is not on the page. With no elements,
 * the enum is empty and a tool that needs one cannot be chosen. click_element leaves out the
 * elements a press cannot change (idlePresses) and the boxes the agent `toggled`, input_text
 * offers only text fields (textFields) and select_option only the elements that hold options
 * (optionChoosers), both less those `filled` (SetControls), select_option also less a radio
 * already checked or a disabled element; click_element leaves out textboxes
 * (typed into, never pressed) and what
 * leads back to the page the agent keeps going back and forth with, or whose press was just held
 * (`unpressed`). For models whose tools are
 * described once and cached (the local model's description leaves integer enums out), the
 * tools' text does not change from step to step.
 */
export function boundToPage(specs: LlmToolSpec[], observation: string, set: { filled?: readonly number[]; toggled?: readonly number[]; unpressed?: readonly number[]; tabsOff?: readonly number[] } = {}): LlmToolSpec[] {
  const elements = observedIndexes(observation);
  const labels = observedLabels(observation);
  const tabs = otherTabs(observation).filter((tab) => !set.tabsOff?.includes(tab));
  const unchangeable = new Set(idlePresses(observation));
  const idle = new Set([...unchangeable, ...(set.toggled ?? []), ...(set.unpressed ?? [])]);
  const done = new Set(set.filled ?? []);
  const fields = new Set(textFields(observation).filter((n) => !done.has(n)));
  const choosers = new Set(optionChoosers(observation));
  // A textbox is typed into, never pressed: pressing one only focuses it, and a small model
  // pressed the name field six times "to enter the name" until its steps ran out (a combobox
  // or spinbutton stays: pressing one may open its list or picker). A native select is chosen
  // in, a file input given files: a press opens a list or a file chooser the agent never sees.
  const plainFields = new Set(elementLines(observation).filter((e) => UNPRESSED_ROLES.has(e.role)).map((e) => e.index));
  const fits: Record<string, (n: number) => boolean> = { click_element: (n) => !idle.has(n) && !plainFields.has(n), input_text: (n) => fields.has(n), select_option: (n) => choosers.has(n) && !done.has(n) && !unchangeable.has(n) };
  return specs.map((spec) => {
    const props = (spec.parameters.properties ?? {}) as Record<string, Record<string, unknown>>;
    if (!props.index || props.index.type !== 'integer') return spec;
    const choosable = fits[spec.name] ? elements.filter(fits[spec.name]) : elements;
    const index = spec.name === 'switch_tab' ? { ...props.index, enum: tabs } : { ...props.index, enum: choosable, [ELEMENT_LABELS]: labels };
    return { ...spec, parameters: { ...spec.parameters, properties: { ...props, index } } };
  });
}

/** A task that asks to add text to what a field holds. */
const APPENDS = /\bappend|\badd\b[^.]{0,60}\b(?:to the end|at the end|after what)\b/i;

/**
 * input_text's `clear` bound to true (or left out: its default) unless the task asks to add to
 * what a field holds. The default model wrote `"clear": false` on every typing of a task and
 * appended the message to the e-mail it had typed, then the e-mail to both. The tools' text
 * stays the same (`const` is not described).
 */
export function replacingTyping(specs: LlmToolSpec[], task: string): LlmToolSpec[] {
  if (APPENDS.test(task)) return specs;
  return specs.map((spec) => {
    const props = (spec.parameters.properties ?? {}) as Record<string, Record<string, unknown>>;
    if (spec.name !== 'input_text' || props.clear?.type !== 'boolean') return spec;
    return { ...spec, parameters: { ...spec.parameters, properties: { ...props, clear: { ...props.clear, const: true } } } };
  });
}

/** Fields a press does nothing useful to: input_text types into them, select_option chooses, upload_file gives files. */
const UNPRESSED_ROLES = new Set(['textbox', 'searchbox', 'select', 'file']);

/** Roles of the elements that take typed text (a date or number input included). */
const TEXT_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton']);

/**
 * The elements input_text can type into. A small model typed "Next" into a "Next page" link
 * three times, and the task ended on the failures.
 */
export function textFields(observation: string): number[] {
  return elementLines(observation)
    .filter((element) => TEXT_ROLES.has(element.role))
    .map((element) => element.index);
}

/** Roles of the elements select_option chooses in: a select, a listbox or combobox (or an option of one), a radio of a group. */
const CHOOSER_ROLES = new Set(['select', 'combobox', 'listbox', 'option', 'radio']);

/**
 * The elements select_option can choose an option of. Kept from pressing a link, a small
 * model "selected" the option "Previous page" in that link instead, again and again.
 */
export function optionChoosers(observation: string): number[] {
  return elementLines(observation)
    .filter((element) => CHOOSER_ROLES.has(element.role))
    .map((element) => element.index);
}

/** Roles whose checked element stays checked when pressed again. */
const CHOICES = new Set(['radio', 'menuitemradio']);

/**
 * The elements a click cannot change: a disabled one, and a radio already checked (pressing
 * it again keeps it checked). A small model pressed the checked plan again and again where
 * the task said to press Submit.
 */
export function idlePresses(observation: string): number[] {
  return elementLines(observation)
    .filter(({ role, line }) => {
      const states = statesOf(line);
      return states.has('disabled') || (CHOICES.has(role) && states.has('checked'));
    })
    .map((element) => element.index);
}

/** The observation shows all the page holds: nothing off screen, nothing cut, no scrolling area. */
export function showsWholePage(observation: string): boolean {
  return observation.includes(WHOLE_PAGE);
}

/**
 * Tools that cannot do anything on the page the observation shows: scroll and extract when it
 * shows the whole page, send_keys with no element to press keys on, switch_tab with one tab.
 */
export function uselessOn(observation: string): string[] {
  const useless: string[] = [];
  if (showsWholePage(observation)) useless.push('scroll', 'extract');
  if (!observedIndexes(observation).length) useless.push('send_keys');
  if (observedTabs(observation).length <= 1) useless.push('switch_tab');
  return useless;
}

/**
 * The tools with those named made unavailable for this answer: their parameters accept no value
 * (`not: {}`), so a model whose answers follow the schemas cannot choose them. They stay in the
 * list, described as always, so the tools' text (the start of a cached prompt) does not change.
 */
export function unavailable(specs: LlmToolSpec[], names: Iterable<string>): LlmToolSpec[] {
  const off = new Set(names);
  off.delete('done');
  return specs.map((spec) => (off.has(spec.name) ? { ...spec, parameters: { ...spec.parameters, not: {} } } : spec));
}

/** An address in a text: http(s)://…, www.…, or a host name (shop.example.com), e-mail addresses left out. */
const ADDRESS = /\bhttps?:\/\/|\bwww\.|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b/i;
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

/**
 * Whether navigate can take the agent anywhere the task asks: the task names an address, or
 * the tab shows no page (about:blank, an error page). With neither, the default model called
 * navigate with the address it was on, to "open" the page it saw or to reload it, and opened
 * the price list in the tab the link had left behind, then lost its way between two tabs.
 */
export function navigateNeeded(task: string, observation: string): boolean {
  if (ADDRESS.test(task.replace(EMAIL, ' '))) return true;
  const url = /^URL: (.*)$/m.exec(observation)?.[1]?.trim() ?? '';
  return !/^https?:\/\//i.test(url);
}

/**
 * Tools that act on the page as a whole (no element): performed again on a page their first
 * call left as it was, they do the same nothing again (read the same text, wait for nothing,
 * scroll no further, open the page it is on, go back nowhere, press the same keys).
 */
const PAGE_TOOLS = new Set(['wait', 'extract', 'scroll', 'navigate', 'go_back', 'send_keys']);

/** The page tools already performed on the page as it is now (the same observation). */
export class SpentTools {
  private page?: string;
  private readonly tools = new Set<string>();

  /** `tool` was chosen from the observation `pageText`. */
  chosen(tool: string, pageText: string): void {
    if (!PAGE_TOOLS.has(tool)) return;
    if (this.page !== pageText) {
      this.page = pageText;
      this.tools.clear();
    }
    this.tools.add(tool);
  }

  /** Those chosen while the page looked as `pageText` does (a call that changed it leaves a new page). */
  on(pageText: string): string[] {
    return this.page === pageText ? [...this.tools] : [];
  }

  reset(): void {
    this.page = undefined;
    this.tools.clear();
  }
}

/** The quoted value an element line shows (`value="…"`), unquoted. */
function shownValue(line: string): string | undefined {
  const quoted = VALUE_HINT.exec(line)?.[1];
  if (quoted === undefined) return undefined;
  try {
    return String(JSON.parse(quoted));
  } catch {
    return quoted.slice(1, -1);
  }
}

const squeeze = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** The field shows `typed` (or its start, when the observation clipped the value with …). */
function holds(line: string, typed: string): boolean {
  const value = shownValue(line);
  if (value === undefined || squeeze(typed) === '') return false;
  if (squeeze(value) === squeeze(typed)) return true;
  return value.endsWith('…') && squeeze(typed).startsWith(squeeze(value.slice(0, -1)));
}

/** Roles of the elements a press ticks or unticks. */
const TOGGLES = new Set(['checkbox', 'switch', 'menuitemcheckbox']);

/**
 * What the agent set on each page (by its address): the text fields it typed into and the
 * boxes it ticked or unticked. A field that still holds what the agent typed (or chose) is not
 * offered to input_text (or select_option) again on that page, nor a box still as the agent's
 * press left it to click_element:
 * a small model typed the same name twice, then the message into the email field it had just
 * filled; it ticked the terms, then pressed them again "to uncheck it and press Continue".
 * One the page emptied, changed back or shows `invalid` is offered again.
 */
export class SetControls {
  private readonly typed = new Map<string, string>();
  /** Whether the box was checked before the agent pressed it. */
  private readonly toggled = new Map<string, boolean>();

  /** input_text put `text` into element `index` of the page `observation` showed (or select_option chose the option `text`). */
  typedInto(observation: string, index: number, text: string): void {
    this.typed.set(`${index} ${urlOf(observation)}`, text);
  }

  /** click_element pressed element `index` of the page `observation` showed (kept when it is a box). */
  pressed(observation: string, index: number): void {
    const element = elementLines(observation).find((e) => e.index === index);
    if (element && TOGGLES.has(element.role)) this.toggled.set(`${index} ${urlOf(observation)}`, statesOf(element.line).has('checked'));
  }

  /** The fields of this observation that hold what the agent typed into them. */
  filled(observation: string): number[] {
    const url = urlOf(observation);
    return elementLines(observation)
      .filter(({ index, line }) => {
        const typed = this.typed.get(`${index} ${url}`);
        return typed !== undefined && holds(line, typed) && !statesOf(line).has('invalid');
      })
      .map((element) => element.index);
  }

  /** The boxes of this observation the agent pressed that are still as its press left them. */
  toggledBoxes(observation: string): number[] {
    const url = urlOf(observation);
    return elementLines(observation)
      .filter(({ index, role, line }) => {
        const before = this.toggled.get(`${index} ${url}`);
        return before !== undefined && TOGGLES.has(role) && statesOf(line).has('checked') !== before;
      })
      .map((element) => element.index);
  }

  reset(): void {
    this.typed.clear();
    this.toggled.clear();
  }
}

const urlOf = (observation: string) => /^URL: (.*)$/m.exec(observation)?.[1] ?? '';
