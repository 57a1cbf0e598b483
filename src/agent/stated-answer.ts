/**
 * A task that asks to be told a figure (a time, a price, a date, a quantity, a phone number),
 * and the agent's own words give that figure while the page in view shows it: the next press
 * away from the page is held once, with the page's line, so that the answer is given now. The
 * default model wrote "The Riverside library opens on Sundays from 13:00 to 17:00" on the
 * branch's page and pressed "Join the library", then went back and forth for eight steps; it
 * wrote "the Gold plan price of $42 per month" and switched tabs until its steps ran out.
 */

import { lineNames, priceExtreme } from './observe/price-extreme';
import { otherWeekday } from './task-values';

export type FigureKind = 'amount' | 'time' | 'date' | 'quantity' | 'number';

/** How a held action begins. */
export const STATED_HELD = 'Not done yet: your own words answer the task';

/** The task asks to be told something. */
const QUESTION = /\?|\b(?:tell me|what(?:'s| is| are| was| were| does| do| time)|when|which|who|how (?:much|many|long|heavy|far|big|old|tall)|until when|find out|look up|give me|answer with|report)\b/i;

/** The kinds of figure a question asks for. */
const ASKED: [FigureKind, RegExp][] = [
  ['amount', /\bhow much\b|\bprices?\b|\bcosts?\b|\bfees?\b|\bcharges?\b|\btotal\b|\bbalance\b|\bamount\b/i],
  ['time', /\bwhat time\b|\bwhen\b|\bopening hours\b|\bopens?\b|\bclos(?:e|es|ing)\b|\bstarts?\b|\bdeparts?\b|\barrives?\b/i],
  ['date', /\bwhen\b|\buntil\b|\bdate\b|\bdue\b|\bexpir|\bvalid\b|\bdeadline\b|\bwhich day\b/i],
  ['quantity', /\bhow (?:long|heavy|far|big|tall|wide|old|many)\b|\bweigh|\bdistance\b|\bduration\b|\bcapacity\b/i],
  ['number', /\bphone\b|\btelephone\b|\bcode\b|\breference\b|\btracking number\b|\bextension\b/i],
];

const MONTH = '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const FIGURES: [FigureKind, RegExp][] = [
  ['amount', /(?:[$€£¥]\s?\d[\d,.]*\d|\d[\d,.]*\s?(?:[€£]|\b(?:EUR|USD|GBP|CHF)\b)|\b\d+[.,]\d{2}\b)/gi],
  ['time', /\b\d{1,2}:\d{2}\b(?![.,:]?\d)|\b\d{1,2}\s?(?:am|pm)\b/gi],
  ['date', new RegExp(`\\b\\d{1,2}(?:st|nd|rd|th)?\\s+${MONTH}\\b(?:\\s+\\d{4})?|\\b${MONTH}\\s+\\d{1,2}(?:st|nd|rd|th)?\\b(?:,?\\s+\\d{4})?|\\b\\d{4}-\\d{2}-\\d{2}\\b|\\b\\d{1,2}/\\d{1,2}/\\d{2,4}\\b`, 'gi')],
  ['quantity', /\b\d+(?:[.,]\d+)?\s?(?:kg|g|km|m|cm|mm|l|ml|mph|km\/h|%|(?:working\s)?days?|hours?|minutes?|weeks?|months?|years?|items?|pieces?|people|seats?|rooms?)\b/gi],
  ['number', /\+?\d[\d -]{3,}\d/g],
];

/** Lines of the observation that are not the page's own text. */
const FRAME_LINE = /^(?:The rest of the page's text \(below the viewport\)|URL|Title|Tabs|Scroll|Interactive elements|Visible text|Above the viewport|Below the viewport|Left or right of the viewport|Note|Changed|Your task|New task):|^\(|^\.\.\. |^\[\d+\]|^A modal dialog/;
const URLS = /\bhttps?:\/\/\S+/g;
/** At most this many characters of a line are quoted, and this many lines; the words quoted are clipped too. */
const MAX_QUOTED = 120;
const MAX_LINES = 2;
const MAX_WORDS = 160;

const digits = (s: string) => s.replace(/\D/g, '');
const squeeze = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();
const clipped = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

/** The kinds of figure the task asks to be told; none for a task that asks nothing. */
export function askedKinds(task: string): FigureKind[] {
  if (!QUESTION.test(task)) return [];
  return ASKED.filter(([, re]) => re.test(task)).map(([kind]) => kind);
}

/** The figures of a text, by kind (a figure may be of several: "12.50" is an amount, "2 days" a quantity). */
export function figuresOf(text: string, kinds: FigureKind[]): string[] {
  const found: string[] = [];
  const plain = text.replace(URLS, ' ');
  for (const [kind, re] of FIGURES) {
    if (!kinds.includes(kind)) continue;
    for (const m of plain.matchAll(re)) {
      const figure = m[0].trim();
      // a number of 5 digits or more (a phone number, a code); shorter groups are other figures
      if (kind === 'number' && digits(figure).length < 5) continue;
      found.push(figure);
    }
  }
  return [...new Set(found)];
}

/** Whether a page line shows the figure: its text, or for a long number its digits. */
function shows(line: string, figure: string): boolean {
  if (squeeze(line).includes(squeeze(figure))) return true;
  const d = digits(figure);
  if (d.length >= 5) return digits(line).includes(d);
  // "13:00" in "13.00", "$42" in "$42/month": the figure's number with its separators
  const core = figure.match(/\d[\d,.:]*\d|\d/)?.[0];
  return !!core && new RegExp(`(?<![\\d.,:])${core.replace(/[.,:]/g, '[.,:]')}(?![\\d]|[.,:]\\d)`).test(line);
}

/** An item's number: "#1025". */
const ITEM = /#\s?(\d{2,})/g;

/**
 * Whether the line names items by number, none of them one the task names: "Invoice #1015:
 * €455.95" for invoice #1025. The default model read that line for #1025; held with it quoted,
 * it took the hold for a yes.
 */
function ofAnotherItem(task: string, line: string): boolean {
  const asked = [...task.matchAll(ITEM)].map((m) => m[1]);
  const named = [...line.matchAll(ITEM)].map((m) => m[1]);
  return asked.length > 0 && named.length > 0 && !named.some((item) => asked.includes(item));
}

/**
 * The held note when the words give, as the answer to the task, figures of the kinds it asks
 * for that the page's text in view shows (none of them given by the task itself), or undefined.
 */
export function statedAnswer(task: string, words: string | undefined, observation: string): string | undefined {
  if (!words) return undefined;
  const kinds = askedKinds(task);
  if (!kinds.length) return undefined;
  const taskDigits = digits(task);
  const figures = figuresOf(words, kinds).filter((f) => !(digits(f) && taskDigits.includes(digits(f))));
  if (!figures.length) return undefined;
  const all = observation.split('\n').map((line) => line.trim());
  const start = all.indexOf('Visible text:');
  if (start < 0) return undefined;
  const lines = all.slice(start + 1).filter((line) => line && !FRAME_LINE.test(line));
  // the line that shows them all, or the first line of each
  const together = lines.find((l) => figures.every((f) => shows(l, f)));
  const quoted: string[] = together ? [together] : [];
  for (const figure of together ? [] : figures) {
    const line = lines.find((l) => shows(l, figure));
    if (!line) return undefined;
    if (!quoted.includes(line)) quoted.push(line);
  }
  if (quoted.length > MAX_LINES || quoted.some((line) => ofAnotherItem(task, line) || otherWeekday(task, line))) return undefined;
  const said = clipped(words.replace(/\s+/g, ' ').trim(), MAX_WORDS);
  const shown = quoted.map((l) => `"${clipped(l, MAX_QUOTED)}"`).join(' and ');
  return `${STATED_HELD}: you wrote "${said}", and this page shows ${shown}. If it does not answer the task, call the same action again; if it does, call done with the answer now.`;
}

/** A verb that sends the agent to a page the task names: "Open the Shipping policy page". */
const GO_TO = String.raw`(?:open|go to|visit|follow|click(?: on)?|press|navigate to|check|read|look at)\s+(?:the\s+|your\s+|my\s+|our\s+)?`;

/**
 * Whether the task tells the agent to open the pressed element ("Open the Shipping policy page
 * and tell me…" for its link "Shipping policy"), and the page in view is not that one (its
 * title does not name it): that press is the task's own first step, not a leave of a page that
 * answers. The default model, on the store's home page whose "Orders ship within 2 days" it
 * quoted, was held pressing "Shipping policy" and answered "2" for the days returns are
 * accepted in.
 */
export function taskSendsTo(task: string, label: string | undefined, observation: string): boolean {
  const name = squeeze((label ?? '').replace(/[^\p{L}\p{N}]+/gu, ' '));
  if (name.length < 3) return false;
  const said = squeeze(task.replace(/[^\p{L}\p{N}]+/gu, ' '));
  // (both are letters, digits and single spaces only)
  if (!new RegExp(`(?:^| )${GO_TO}${name}(?: |$)`).test(said)) return false;
  const title = /^Title: (.*)$/m.exec(observation)?.[1] ?? '';
  return !squeeze(title).includes(name);
}

const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * The agent's words without the sentences it copied from what the service said of its held
 * action (`said`): a sentence of four words or more, at least four fifths of them in `said`.
 * The default model, held with "this page shows "Gold plan: $42 per month"… if it does not,
 * call switch_tab again", wrote that note back as its thought and was held a second time for
 * "its own words", then switched tabs until its time ran out.
 */
export function ownWords(words: string | undefined, said: string | undefined): string | undefined {
  if (!words || !said) return words;
  const heard = new Set(wordsOf(said));
  const own = words.split(/(?<=[.;!?])\s+/).filter((sentence) => {
    const all = wordsOf(sentence);
    return all.length < 4 || all.filter((word) => heard.has(word)).length < 0.8 * all.length;
  });
  return own.join(' ').trim() || undefined;
}

/** Whether `text` holds `name` as words of its own (not inside a longer word). */
function holdsName(text: string, name: string): boolean {
  const escaped = squeeze(name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'u').test(squeeze(text));
}

/**
 * The held note when the task asks which is the cheapest (most expensive) one (no figure of
 * it), the page in view has it (price-extreme.ts), and the agent's words name the thing of that
 * line (a name the task does not give) while the action is not a press of that thing's own
 * element (`pressed`, its label: opening it), or undefined. The default model, told the lowest was on the line "Trowel:
 * $7", wrote "The cheapest product is Trowel, which costs $7" and pressed "All categories",
 * then gave up on the page before.
 */
export function statedExtreme(task: string, words: string | undefined, observation: string, pressed?: string): string | undefined {
  if (!words || !QUESTION.test(task) || askedKinds(task).length) return undefined;
  const extreme = priceExtreme(task, observation);
  if (!extreme) return undefined;
  const named = (l: string) => lineNames(l).filter((name) => holdsName(words, name) && !holdsName(task, name));
  const line = extreme.lines.find((l) => named(l).length && !named(l).some((name) => pressed && holdsName(pressed, name)));
  if (!line) return undefined;
  const which = extreme.named.end === 'lowest' ? 'the lowest price' : 'the highest price';
  const said = clipped(words.replace(/\s+/g, ' ').trim(), MAX_WORDS);
  return `${STATED_HELD}: you wrote "${said}", and this page shows "${clipped(line, MAX_QUOTED)}", ${which} of the page. If it does not answer the task, call the same action again; if it does, call done with the answer now.`;
}
