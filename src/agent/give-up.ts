/**
 * An early give-up (done with success=false after few actions) answered once, with the
 * element whose words the task shares most: the default model, asked for a library's Sunday
 * hours, read the list of branches, did not press "Riverside Library", and gave up after three
 * actions ("The Riverside library is not open on Sundays").
 */
import { ELEMENT_PARTS, readObservation } from './observe/page-diff';

/** A give-up after at most this many steps of the task is answered once. */
export const EARLY_ACTIONS = 4;
/** How an answered give-up begins. */
export const GIVE_UP_HELD = 'Not ended yet:';

const COMMON = new Set(['the', 'and', 'for', 'with', 'you', 'your', 'our', 'from', 'this', 'that', 'what', 'when', 'does', 'how', 'tell', 'find', 'page', 'more', 'about']);
const wordsOf = (text: string) => new Set((text.toLowerCase().match(/\p{L}{3,}/gu) ?? []).map((w) => w.replace(/(?<=[^s])s$/, '')).filter((w) => !COMMON.has(w)));

/** The link or button whose label shares the most words with the task (at least one), or undefined. */
export function likeliestElement(task: string, observation: string): { index: number; role: string; label: string } | undefined {
  const taskWords = wordsOf(task);
  let best: { index: number; role: string; label: string; shared: number } | undefined;
  for (const [index, line] of readObservation(observation).elements) {
    const m = ELEMENT_PARTS.exec(line.trim());
    if (!m || !['link', 'button', 'tab', 'menuitem'].includes(m[2]) || /\bdisabled\b/.test(m[4])) continue;
    const label = m[3].replace(/\\(.)/g, '$1');
    const shared = [...wordsOf(label)].filter((w) => taskWords.has(w)).length;
    if (shared && (!best || shared > best.shared)) best = { index, role: m[2], label, shared };
  }
  return best && { index: best.index, role: best.role, label: best.label };
}

/**
 * What an early give-up is answered with: the lines of the whole page (below the viewport too)
 * that show what the task asks about, when `shown` quotes some, else the element likeliest to
 * lead on.
 */
export function giveUpNote(task: string, observation: string, steps: number, shown?: string): string {
  const after = steps ? `after ${steps} step${steps === 1 ? '' : 's'}` : 'before any action';
  if (shown) return `${GIVE_UP_HELD} you gave up ${after}, but the page's whole text (below what is in view too) shows ${shown}. If that answers the task, call done with it and success=true; if the task cannot be done, call done with success=false again.`;
  const likeliest = likeliestElement(task, observation);
  const hint = likeliest ? ` [${likeliest.index}] ${likeliest.role} "${likeliest.label}" has words of the task: it may lead to what the task asks.` : ' A link or button, a scroll or a search may lead to what the task asks.';
  return `${GIVE_UP_HELD} you gave up ${after}.${hint} Try that first; if the task cannot be done, call done with success=false again.`;
}
