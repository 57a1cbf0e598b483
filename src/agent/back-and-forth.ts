import { observedLabels } from './page-bound-tools';
import { readObservation } from './observe/page-diff';

/** An observation's address without the fragment. */
const addressOf = (observation: string): string => readObservation(observation).url.replace(/#.*$/, '');
const visibleText = (observation: string): string[] => readObservation(observation).text;

const WEB = /^https?:\/\//;

/** What the note quotes of the other page at most. */
const QUOTE_MAX_CHARS = 300;

/** Where the agent is going back and forth: the other page, and what on this one leads there. */
export interface BackAndForthLoop {
  /** The page it keeps going back to from this one. */
  other: string;
  /** The text that page showed when the agent was last there (the model sees only this page now). */
  otherText: string;
  /** That page's title: a tab showing it leads back there too. */
  otherTitle: string;
  /** The elements of this page whose press took it there, by index, with their labels. */
  leadBack: { index: number; label: string }[];
}

/**
 * The pages of a task in the order the agent reached them, and where pressing each element
 * led. Going from page A to page B, back to A and to B again is a loop: a small model went
 * between a results page and the next with the answer on one of them (Next page, Previous
 * page, until the steps ran out), and between two category pages. On B the elements that
 * led to A (and go_back) are then what keeps it going; the agent tells the model so, and a
 * model whose answers follow the schemas is not offered them on that page.
 */
export class BackAndForth {
  private readonly visits: string[] = [];
  /** page → element label → the page its press led to. */
  private readonly ways = new Map<string, Map<string, string>>();
  /** The address a page was first seen at, by its visible text: the same page at two addresses (`?q=chair`, `?q=chair&page=1`) is one. */
  private readonly byText = new Map<string, string>();
  /** The visible text each page showed last. */
  private readonly texts = new Map<string, string[]>();
  /** The title each page showed last. */
  private readonly titles = new Map<string, string>();

  /** The page an observation shows: its address, or the first address its same text was seen at. */
  private pageOf(observation: string): string {
    const address = addressOf(observation);
    const text = visibleText(observation).join('\n');
    if (!text) return address;
    const known = this.byText.get(text);
    if (known !== undefined) return known;
    this.byText.set(text, address);
    return address;
  }

  /** The agent reached the page `now` shows from the one `before` showed, by pressing element `index` of it (0: no press). */
  moved(before: string | undefined, now: string, index: number): void {
    // A browser's error page (an address that could not be reached) is not a page of the site.
    if (!WEB.test(addressOf(now)) || (before !== undefined && !WEB.test(addressOf(before)))) return;
    const from = before === undefined ? undefined : this.pageOf(before);
    const to = this.pageOf(now);
    this.texts.set(to, visibleText(now));
    this.titles.set(to, readObservation(now).title);
    if (from !== undefined && from !== to && index > 0) {
      const label = observedLabels(before!)[index];
      if (label) {
        if (!this.ways.has(from)) this.ways.set(from, new Map());
        this.ways.get(from)!.set(label, to);
      }
    }
    if (from !== undefined && this.visits.at(-1) !== from) this.visits.push(from);
    if (this.visits.at(-1) !== to) this.visits.push(to);
  }

  /** On the page `observation` shows, when the agent came to it from another, back, and to it again. */
  loop(observation: string): BackAndForthLoop | undefined {
    if (!WEB.test(addressOf(observation))) return undefined;
    const here = this.pageOf(observation);
    const v = this.visits;
    const n = v.length;
    if (n < 4 || v[n - 1] !== here || v[n - 3] !== here || v[n - 2] !== v[n - 4] || v[n - 2] === here) return undefined;
    const other = v[n - 2];
    const labels = new Set([...(this.ways.get(here) ?? [])].filter(([, to]) => to === other).map(([label]) => label));
    const leadBack = Object.entries(observedLabels(observation))
      .filter(([, label]) => labels.has(label))
      .map(([index, label]) => ({ index: Number(index), label }));
    const lines = this.texts.get(other) ?? [];
    let otherText = lines.join(' / ');
    if (otherText.length > QUOTE_MAX_CHARS) otherText = `${otherText.slice(0, QUOTE_MAX_CHARS - 1)}…`;
    return { other, otherText, otherTitle: this.titles.get(other) ?? '', leadBack };
  }

  reset(): void {
    this.visits.length = 0;
    this.ways.clear();
    this.byText.clear();
    this.texts.clear();
    this.titles.clear();
  }
}

/** What the model is told on a page it keeps leaving for the same other page and coming back to. */
export function backAndForthNote(loop: BackAndForthLoop): string {
  const by = loop.leadBack.length ? `${loop.leadBack.map((e) => `"${e.label}" [${e.index}]`).join(', ')} only ${loop.leadBack.length > 1 ? 'lead' : 'leads'} back there` : 'going back only leads there';
  const shown = loop.otherText ? ` That page showed: "${loop.otherText}".` : '';
  return `Note: this is the second time you came to this page from ${loop.other}, and you went back there in between; ${by}.${shown} If what the task asks is on one of these two pages, answer from it (call done); if not, go on another way.`;
}
