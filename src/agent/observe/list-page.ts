/**
 * A list of several pages, and the task naming one of them ("on the second page", "page 3"):
 * which page the observation shows (the pager's current button, a "Page 2 of 5" line, the
 * address's page number) and what to press to reach the one the task names. A small model
 * read a list's first page and answered with its lines for a task that named another page.
 */
import { hasState, observedElements, readObservation, type ObservedElement } from './page-diff';

const ORDINALS: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10 };
const NUMBERS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 };
/** "the second page", "3rd page", "page 2", "page two". */
const ORDINAL_PAGE = /\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|(\d{1,3})(?:st|nd|rd|th))\s+page\b/i;
const PAGE_NUMBER = /\bpage\s*(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten)\b/i;
/** A line of the page saying where the list is: "Page 2 of 5", "12 results, page 1 of 3". */
const PAGE_LINE = /\bpage (\d{1,3}) of \d{1,3}\b/i;
/** A short line saying so alone: "Page 2", "Showing page 3". */
const PAGE_ALONE = /^(?:showing |you are on )?page (\d{1,3})\.?$/i;
/** The address's page number: ?page=2, &p=2, /page/2. */
const PAGE_IN_URL = /(?:[?&](?:page|p|pg)=|\/page\/)(\d{1,3})\b/i;
const NEXT = /^(?:next(?: page)?|more|older|›|»|>|→)(?:\s*[›»>→])?$/i;
const PREVIOUS = /^(?:[‹«<←]\s*)?(?:prev(?:ious)?(?: page)?|back|newer|‹|«|<|←)$/i;

/** The page of a list the task names, if it names one. */
export function askedPage(task: string): number | undefined {
  const ordinal = ORDINAL_PAGE.exec(task);
  if (ordinal) return ordinal[2] ? Number(ordinal[2]) : ORDINALS[ordinal[1].toLowerCase()];
  const numbered = PAGE_NUMBER.exec(task);
  if (!numbered) return undefined;
  return /^\d+$/.test(numbered[1]) ? Number(numbered[1]) : NUMBERS[numbered[1].toLowerCase()];
}

/** The pager's buttons and links: labelled with a page number ("2", "Page 2"). */
function pageButtons(elements: ObservedElement[]): { element: ObservedElement; page: number }[] {
  return elements.flatMap((element) => {
    if (element.role !== 'button' && element.role !== 'link' && element.role !== 'tab') return [];
    const m = /^(?:page\s*|go to page\s*)?(\d{1,3})$/i.exec(element.label.trim());
    return m ? [{ element, page: Number(m[1]) }] : [];
  });
}

/** The page of the list the observation shows, when it says so; undefined when it does not. */
export function shownPage(observation: string): number | undefined {
  const elements = observedElements(observation);
  const current = pageButtons(elements).find((b) => hasState(b.element.line, ['current', 'selected', 'pressed']));
  if (current) return current.page;
  const page = readObservation(observation);
  for (const line of page.text) {
    const m = PAGE_LINE.exec(line) ?? PAGE_ALONE.exec(line.trim());
    if (m) return Number(m[1]);
  }
  const inUrl = PAGE_IN_URL.exec(page.url);
  if (inUrl) return Number(inUrl[1]);
  // a pager whose previous-page control is disabled: the first page
  const previous = elements.find((e) => (e.role === 'button' || e.role === 'link') && PREVIOUS.test(e.label.trim()));
  return previous && hasState(previous.line, ['disabled']) && pageButtons(elements).length >= 2 ? 1 : undefined;
}

/** What to press to get from `shown` to `asked`: the button of that page, or next (previous) page. */
function controlTo(elements: ObservedElement[], asked: number, shown: number): ObservedElement | undefined {
  const direct = pageButtons(elements).find((b) => b.page === asked && !hasState(b.element.line, ['disabled']));
  if (direct) return direct.element;
  const step = asked > shown ? NEXT : PREVIOUS;
  return elements.find((e) => (e.role === 'button' || e.role === 'link') && step.test(e.label.trim()) && !hasState(e.line, ['disabled']));
}

/** The task's page and the shown one, with what to press when they differ; undefined when the task names no page or the page does not say which it shows. */
export function listPage(task: string, observation: string): { asked: number; shown: number; press?: ObservedElement } | undefined {
  const asked = askedPage(task);
  if (asked === undefined) return undefined;
  const shown = shownPage(observation);
  if (shown === undefined) return undefined;
  return { asked, shown, press: shown === asked ? undefined : controlTo(observedElements(observation), asked, shown) };
}

/** The observation's note: on another page than the task's, what to press; on the task's page, that it is the one. */
export function listPageNote(at: { asked: number; shown: number; press?: ObservedElement }): string {
  if (at.shown === at.asked) return `Note: the list shows page ${at.asked}, the page the task asks about.`;
  return `Note: the task asks about page ${at.asked} of the list; this is page ${at.shown}: its lines are not the answer.${pressTo(at)}`;
}

/** What a done on another page of the list than the task's is answered with. */
export function listPageObjection(at: { asked: number; shown: number; press?: ObservedElement }): string {
  return `Not accepted yet: the task asks about page ${at.asked} of the list, and this is page ${at.shown}.${pressTo(at)} If the answer is right as it is, call done again.`;
}

function pressTo(at: { asked: number; press?: ObservedElement }): string {
  return at.press ? ` Press [${at.press.index}] "${at.press.label}" to go to page ${at.asked}.` : '';
}

/** How a held press away from the list's page the task asks about begins. */
export const LIST_LEAVE_HELD = 'Not pressed: the list shows page';

/**
 * The note when `index` is a pager control (a page's number, next, previous) while the list
 * shows the page the task asks about, with the pager's controls away from it, or undefined:
 * on page 2, told so, the default model pressed "3" and "2" in turn for 14 steps and never
 * answered (held, it pressed "3" again at once: the controls are left out of the next answer).
 */
export function listPageLeave(task: string, observation: string, index: number): { note: string; away: number[] } | undefined {
  const at = listPage(task, observation);
  if (!at || at.shown !== at.asked) return undefined;
  // the pager's controls to another page: the other pages' numbers, next and previous
  const away = observedElements(observation).filter((e) => {
    if (e.role !== 'button' && e.role !== 'link' && e.role !== 'tab') return false;
    const label = e.label.trim();
    return pageButtons([e]).some((b) => b.page !== at.asked) || NEXT.test(label) || PREVIOUS.test(label);
  });
  const pressed = away.find((e) => e.index === index);
  if (!pressed) return undefined;
  const note = `${LIST_LEAVE_HELD} ${at.asked}, the page the task asks about, and [${index}] "${pressed.label.trim()}" would show another. Answer from this page's lines (call done with what the task asks); to show another page anyway, press [${index}] again.`;
  return { note, away: away.map((e) => e.index) };
}
