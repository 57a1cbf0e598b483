/**
 * The figures of a task's pages, tool results and prompt, so that a done whose answer gives an
 * amount none of them held is questioned once: a small model answered "$129.99" and
 * "€374.26", amounts no page it saw had shown, before the page that held the answer.
 */

/** A number as text: digits with `.` or `,` groups (1,234.50; 374,26; 149). */
const NUMBER = /\d+(?:[.,]\d+)*/g;
/** A currency just before a number, or just after it (a symbol after it that opens the next number is not its). */
const CURRENCY_BEFORE = /(?:[$€£¥]|\b(?:EUR|USD|GBP|CHF|JPY))\s?$/;
const CURRENCY_AFTER = /^\s?(?:[$€£¥](?!\s?\d)|(?:EUR|USD|GBP|CHF|JPY)\b)/;

/** The keys a number is known by: its digits, and without a zero decimal part (149.00 is 149). */
function keysOf(number: string): string[] {
  const digits = number.replace(/\D/g, '');
  const whole = number.replace(/[.,]0+$/, '').replace(/\D/g, '');
  return whole === digits ? [digits] : [digits, whole];
}

/** The amounts an answer gives: numbers with a currency beside them, or with two decimals. */
export function amountsOf(answer: string): string[] {
  const amounts: string[] = [];
  for (const m of answer.matchAll(NUMBER)) {
    const at = m.index ?? 0;
    const currency = CURRENCY_BEFORE.test(answer.slice(Math.max(0, at - 5), at)) || CURRENCY_AFTER.test(answer.slice(at + m[0].length, at + m[0].length + 5));
    if (currency || /[.,]\d{2}$/.test(m[0])) amounts.push(m[0]);
  }
  return amounts;
}

/** An item's number on a line: "#1025", "# 1025". */
const ITEM = /#\s?(\d{2,})/g;
/** At most this many characters of a line are kept to be quoted. */
const MAX_LINE = 120;

/** An amount seen on a line that names an item by its number: where it was seen. */
interface AmountLines {
  /** The item numbers of the lines it was on ('' for a line that names none). */
  items: Set<string>;
  /** The first such line, to quote. */
  line: string;
}

export class SeenFigures {
  private readonly seen = new Set<string>();
  private readonly lines = new Map<string, AmountLines>();

  saw(text: string): void {
    for (const m of text.matchAll(NUMBER)) for (const key of keysOf(m[0])) this.seen.add(key);
    for (const raw of text.split('\n')) {
      const amounts = amountsOf(raw);
      if (!amounts.length || this.lines.size > 5000) continue;
      const items = [...raw.matchAll(ITEM)].map((m) => m[1]);
      const line = raw.trim().slice(0, MAX_LINE);
      for (const key of amounts.flatMap(keysOf)) {
        const entry = this.lines.get(key) ?? { items: new Set<string>(), line };
        for (const item of items.length ? items : ['']) entry.items.add(item);
        this.lines.set(key, entry);
      }
    }
  }

  /**
   * An amount of `answer` seen only on lines of other items than the one the answer names
   * ("€374.26" of "Invoice #1002: €374.26" for "#1025"), with the line it was on.
   */
  misplaced(answer: string): { amount: string; item: string; line: string } | undefined {
    const named = [...answer.matchAll(ITEM)].map((m) => m[1]);
    if (!named.length) return undefined;
    for (const amount of amountsOf(answer)) {
      const entry = keysOf(amount).map((key) => this.lines.get(key)).find((found) => found !== undefined);
      if (!entry || entry.items.has('') || named.some((item) => entry.items.has(item))) continue;
      return { amount, item: `#${named[0]}`, line: entry.line };
    }
    return undefined;
  }

  /** The amounts of `answer` that no text seen held. */
  unseen(answer: string): string[] {
    return amountsOf(answer).filter((amount) => !keysOf(amount).some((key) => this.seen.has(key)));
  }

  reset(): void {
    this.seen.clear();
    this.lines.clear();
  }
}
