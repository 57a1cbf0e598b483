/**
 * For a task that asks for the cheapest (or the most expensive) of something, the line of the
 * observation with the lowest (highest) price, said after the page. A small model answered
 * "Garden Hose" ($19, the first of the list) for the cheapest of four products whose lowest
 * was $7: it reads a list in order and cannot compare the figures of its lines.
 */

import { searchTerms } from '../task-values';
import { observedElements, type ObservedElement } from './page-diff';

const LOWEST = /\b(?:cheapest|least expensive|lowest[- ](?:price|priced|cost|fare|rate)|least costly)\b/i;
const HIGHEST = /\b(?:most expensive|priciest|highest[- ](?:price|priced|cost|fare|rate)|costliest)\b/i;
/** An amount with its currency before or after it. */
const PRICE = /(?:[$€£]\s?(\d[\d,]*(?:\.\d{1,2})?)|(\d[\d,]*(?:\.\d{1,2})?)\s?(?:[$€£]|(?:USD|EUR|GBP)\b))/g;
/** Lines of the observation that are not the page's own (address, title, tabs, the headings of its parts). */
const FRAME_LINE = /^(?:The rest of the page's text \(below the viewport\)|URL|Title|Tabs|Interactive elements|Visible text):|^\(/;
/** At most this many characters of a line are quoted. */
const MAX_QUOTED = 120;

/**
 * Whether `line` names `name` as a whole title: not followed by another capitalised word or
 * a figure ("Dune – Frank Herbert" names Dune; "Dune Messiah – Frank Herbert" does not).
 */
function namesTitle(line: string, name: string): boolean {
  const lower = line.toLowerCase();
  const wanted = name.toLowerCase();
  for (let at = lower.indexOf(wanted); at >= 0; at = lower.indexOf(wanted, at + 1)) {
    const before = line.slice(0, at);
    const after = line.slice(at + name.length);
    if (/[\p{L}\d]$/u.test(before) || /^[\p{L}\d]/u.test(after)) continue;
    if (!/^\s+[\p{Lu}\d]/u.test(after)) return true;
  }
  return false;
}

/** Which end of the prices the task asks for, or undefined. */
export function priceExtremeAsked(task: string): 'lowest' | 'highest' | undefined {
  if (LOWEST.test(task)) return 'lowest';
  if (HIGHEST.test(task)) return 'highest';
  return undefined;
}

/** The lines of the observation with one price: "Trowel: $7" (a line with two, "was $20, now $15", says nothing sure). */
function pricedLines(observation: string): { line: string; value: number }[] {
  const priced: { line: string; value: number }[] = [];
  for (const raw of observation.split('\n')) {
    const line = raw.trim();
    if (!line || FRAME_LINE.test(line)) continue;
    const amounts = [...line.matchAll(PRICE)].map((m) => Number((m[1] ?? m[2]).replace(/,/g, '')));
    if (amounts.length === 1 && Number.isFinite(amounts[0])) priced.push({ line, value: amounts[0] });
  }
  return priced;
}

/** An empty search field of the observation (`[1] textbox "Title, author or ISBN" type=search empty`), and the button listed right after it. */
function emptySearchField(observation: string): { field: string; button?: string } | undefined {
  const elements = observation.split('\n').filter((line) => /^\s*\[\d+\] /.test(line)).map((line) => line.trim());
  const at = elements.findIndex((line) => /^\[\d+\] (?:searchbox|textbox) "[^"]*"/.test(line) && /\bempty\b/.test(line) && (/^\[\d+\] searchbox|\btype=search\b/.test(line) || /^\[\d+\] \S+ "[^"]*search/i.test(line)));
  if (at < 0) return undefined;
  const name = (line: string) => /^\[\d+\] \S+ "[^"]*"/.exec(line)![0].replace(/ \S+ /, ' ');
  const next = elements[at + 1];
  return { field: name(elements[at]), button: next && /^\[\d+\] button "/.test(next) ? name(next) : undefined };
}

/**
 * For a task that asks for the cheapest (the most expensive) of a name, on a page with an
 * empty search field and no two prices: search for the name first, to see every one. The
 * default model, asked for the cheapest copy of Dune, opened the home page's staff pick "Dune
 * – Frank Herbert (Folio Society)" at once and answered with its seller.
 */
export function searchFirstNote(task: string, observation: string): string | undefined {
  const end = priceExtremeAsked(task);
  if (!end || pricedLines(observation).length >= 2) return undefined;
  const name = searchTerms(task, /^Title: .*$/m.exec(observation)?.[0] ?? '')[0];
  const search = name ? emptySearchField(observation) : undefined;
  if (!search) return undefined;
  const send = search.button ? `then press ${search.button}` : 'then press Enter';
  const linked = new RegExp(`^\\s*\\[\\d+\\] link ".*${name!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'im').test(observation);
  return `Note: the task asks for the ${end === 'lowest' ? 'cheapest' : 'most expensive'} "${name!}"${linked ? ': a link here names one of them' : ''}; to compare them all, type "${name!}" into ${search.field}, ${send}.`;
}

/** The note for the observation, or undefined when the task asks for no extreme or the page shows fewer than two prices. */
export function priceExtremeNote(task: string, observation: string): string | undefined {
  return priceExtreme(task, observation)?.note;
}

/** What the note names: the amount of the line it gives (`€4.75`), and which end it is. */
export interface ExtremeNamed {
  amount: string;
  end: 'lowest' | 'highest';
}

/**
 * Said on the page opened from the one whose note named the cheapest (most expensive) line,
 * when it shows that line's amount: the default model, told "Dune … €4.75" was the lowest,
 * opened it, read "Sold by Paperback Rider, Hull", and went back to the home page to "find the
 * cheapest copy" again.
 */
export function extremeOpenedNote(named: ExtremeNamed, observation: string): string | undefined {
  const text = observation.split('\n').filter((line) => line.trim() && !FRAME_LINE.test(line.trim()));
  if (!text.some((line) => [...line.matchAll(PRICE)].some((m) => m[0].trim() === named.amount))) return undefined;
  const which = named.end === 'lowest' ? 'cheapest' : 'most expensive';
  return `Note: this page shows ${named.amount}, the ${named.end} price of the page before: it is the ${which} one's own page. If the task asks what this page shows, call done with it.`;
}

/** The note, with what it names. */
export function priceExtreme(task: string, observation: string): { note: string; named: ExtremeNamed; lines: string[] } | undefined {
  const end = priceExtremeAsked(task);
  if (!end) return undefined;
  const priced = pricedLines(observation);
  // "the cheapest copy of Dune": the lines of that title, not of "Dune Messiah" (the default
  // model, told the sequel's line was the lowest, opened it and answered with it)
  // (the site's name is in the title; the address of search results holds the title searched)
  const name = searchTerms(task, /^Title: .*$/m.exec(observation)?.[0] ?? '')[0];
  const titled = name ? priced.filter((p) => namesTitle(p.line, name)) : [];
  const others = titled.length && titled.length < priced.length && priced.some((p) => !titled.includes(p) && p.line.toLowerCase().includes(name!.toLowerCase()));
  if (others) priced.splice(0, priced.length, ...titled);
  const values = new Set(priced.map((p) => p.value));
  if (values.size < 2 && !others) return undefined;
  const best = end === 'lowest' ? Math.min(...values) : Math.max(...values);
  const lines = [...new Set(priced.filter((p) => p.value === best).map((p) => p.line))].slice(0, 2);
  const quoted = lines.map((line) => `"${line.length > MAX_QUOTED ? `${line.slice(0, MAX_QUOTED - 1)}…` : line}"`).join(' and ');
  const which = end === 'lowest' ? 'cheapest' : 'most expensive';
  const of = others ? ` of "${name!}" (other titles left out)` : '';
  const count = priced.length === 1 ? 'the 1 price' : `the ${priced.length} prices`;
  const amount = [...lines[0].matchAll(PRICE)][0][0].trim();
  const opens = lines.length === 1 ? elementOfLine(observation, lines[0], priced.map((p) => p.line)) : undefined;
  const press = opens ? ` Press [${opens.index}] ${opens.role} "${opens.label}" to open it.` : '';
  return { note: `Note: of ${count}${of} on this page, the ${end} is on ${lines.length > 1 ? 'the lines' : 'the line'} ${quoted} (the task asks for the ${which}).${press}`, named: { amount, end }, lines };
}

/**
 * The link or button of a priced line: one whose label the line holds, the only element of that
 * label, or the k-th of as many elements of that label as priced lines hold it (each card's "See
 * availability"). The default model, told the lowest was on "€71 a night · See availability",
 * opened the card above it.
 */
function elementOfLine(observation: string, line: string, pricedInOrder: string[]): ObservedElement | undefined {
  // (an element's own line names its index already)
  if (/^\[\d+\] /.test(line)) return undefined;
  const elements = observedElements(observation).filter((e) => (e.role === 'link' || e.role === 'button') && e.label.trim().length >= 3);
  for (const label of [...new Set(elements.map((e) => e.label))]) {
    if (!line.includes(label)) continue;
    const same = elements.filter((e) => e.label === label);
    const holding = pricedInOrder.filter((l) => l.includes(label));
    if (same.length === 1 && holding.length === 1) return same[0];
    if (same.length === holding.length && same.length > 1) return same[holding.indexOf(line)];
  }
  return undefined;
}

/**
 * The parts of a priced line that name its thing, without its prices ("Trowel: $7": Trowel;
 * "Dune – Frank Herbert – €4.75": Dune, Frank Herbert), each of three characters or more.
 */
export function lineNames(line: string): string[] {
  return line
    .replace(PRICE, ' ')
    .split(/\s[–—-]\s|[:|·•]|,\s/)
    .map((part) => part.replace(/\s+/g, ' ').trim())
    .filter((part) => part.length >= 3 && /\p{L}/u.test(part));
}
