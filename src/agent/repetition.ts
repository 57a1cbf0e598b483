import { createHash } from 'node:crypto';

/** After this many identical actions on an unchanged page the model is told. */
export const REPEAT_WARN_AT = 3;
/** The task ends when the model chooses the same action this many times on an unchanged page. */
export const REPEAT_STOP_AT = 5;

/** Actions that may rightly be repeated on a page that does not change (waiting for it to). */
const EXEMPT = new Set(['wait', 'done', 'request_human_input']);

export type RepetitionVerdict = { kind: 'ok' } | { kind: 'warn'; count: number } | { kind: 'stop'; count: number };

/**
 * Counts the same action on the same element (same tool, same arguments) chosen again while
 * the page looks as it did (the same observation): a model that clicks a dead button forever
 * is told after REPEAT_WARN_AT and stopped at REPEAT_STOP_AT.
 */
export class RepetitionGuard {
  private last?: { action: string; page: string };
  private count = 0;

  /** The verdict on the action the model just chose, with `pageText` the observation it chose it from. */
  note(tool: string, args: unknown, pageText: string): RepetitionVerdict {
    if (EXEMPT.has(tool)) {
      this.reset();
      return { kind: 'ok' };
    }
    const action = `${tool} ${canonical(args)}`;
    const page = createHash('sha256').update(pageText).digest('hex');
    if (this.last && this.last.action === action && this.last.page === page) this.count += 1;
    else {
      this.last = { action, page };
      this.count = 1;
    }
    if (this.count >= REPEAT_STOP_AT) return { kind: 'stop', count: this.count };
    if (this.count >= REPEAT_WARN_AT) return { kind: 'warn', count: this.count };
    return { kind: 'ok' };
  }

  /**
   * The tool the model has repeated REPEAT_WARN_AT times or more while the page looked like
   * `pageText` (it is still that page): a model that follows the tools' schemas is not offered
   * it for its next answer.
   */
  repeating(pageText: string): string | undefined {
    if (!this.last || this.count < REPEAT_WARN_AT) return undefined;
    const page = createHash('sha256').update(pageText).digest('hex');
    return page === this.last.page ? this.last.action.split(' ')[0] : undefined;
  }

  reset(): void {
    this.last = undefined;
    this.count = 0;
  }
}

/** Arguments with their keys sorted, so {a, b} and {b, a} are the same action. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** What the model is told when it repeats itself. */
export function repetitionNote(tool: string, count: number): string {
  return `Note: you have now chosen ${tool} with the same arguments ${count} times in a row and the page did not change. It has no effect: do something different (another element, another way, done with the answer if you have it, or done with success=false if the task cannot be completed). The task ends if you repeat it ${REPEAT_STOP_AT - count} more time${REPEAT_STOP_AT - count === 1 ? '' : 's'}.`;
}

/** Actions that change what a page holds each time they are performed (an Add to cart, a +1). */
const STATE_CHANGING = new Set(['click_element']);

/**
 * Counts the same state-changing action on the same element (as the observation names it)
 * repeated while the page changed in between: each press did something, and a model that
 * meant to press once is told how many times it pressed and what the page shows now.
 */
export class PressCounter {
  private last?: { action: string; page: string; text: string };
  /** Presses of the same element in a row, each on a page changed since the one before. */
  count = 0;
  /** The element as the model saw it. */
  element = '';

  /** A performed action, with the element's observation line and the page it was chosen on. */
  note(tool: string, args: unknown, element: string, pageText: string): number {
    if (!STATE_CHANGING.has(tool)) {
      this.reset();
      return 0;
    }
    const action = `${tool} ${element || canonical(args)}`;
    const page = createHash('sha256').update(pageText).digest('hex');
    if (this.last && this.last.action === action && this.last.page !== page) this.count += 1;
    else this.count = 1;
    this.last = { action, page, text: pageText };
    this.element = element;
    return this.count;
  }

  /**
   * The observation the last action (`tool` on `element`) was chosen from, when it was that
   * action and the page changed since (now `pageText`): a press about to be made again.
   */
  pressedBefore(tool: string, element: string, pageText: string): string | undefined {
    if (!element || !this.last || this.last.action !== `${tool} ${element}`) return undefined;
    return this.last.page === createHash('sha256').update(pageText).digest('hex') ? undefined : this.last.text;
  }

  reset(): void {
    this.last = undefined;
    this.count = 0;
    this.element = '';
  }
}

/** What the model is told when it pressed the same element several times and the page changed each time. */
export function pressNote(element: string, count: number, shown: string | undefined): string {
  const label = /"((?:[^"\\]|\\.)*)"/.exec(element)?.[1] || element;
  const now = shown ? `; the page shows "${shown}"` : '';
  return `Note: you pressed "${label}" ${count} times in a row and the page changed each time${now}. Each press acts again: press it once more only if the task needs one more.`;
}

/** How a held second press is answered. */
export const REPEAT_HELD = 'Not pressed again:';

/** A button whose press adds or buys something: pressed twice, it adds or orders twice. */
const ADDS = /^(add|buy|order|book|pay|purchase|donate|vote|subscribe|place order)\b/i;

/**
 * A press of a button that adds or buys (`Add Green Mug to cart`) made again right after it
 * changed the page: held once per button in a task, the model told what the page shows now.
 * The default model pressed "Add Green Mug to cart" twice, then, kept from a third press,
 * added the white mug. Whether the page changed since is PressCounter.pressedBefore's to say.
 */
export function repeatNote(line: string, index: number, shown: string | undefined): string | undefined {
  const match = /^\[\d+\] (button|link) "((?:[^"\\]|\\.)*)"/.exec(line);
  if (!match || !ADDS.test(match[2].trim())) return undefined;
  const result = shown ? ` (the page now shows "${shown}")` : '';
  return `${REPEAT_HELD} you pressed [${index}] "${match[2]}" at your last step and the page changed${result}. A second press adds a second one. If the task asks for one, that is done: call done. If it asks for more, press it again after your next step.`;
}

/** A button that puts one item in a cart or buys it ("Add Green Mug to cart", "Add to basket", "Buy now"). */
const CART_ADD = /^(?:add\b.*\b(?:cart|basket|bag|trolley)\b|buy\b)/i;

/** Words of a task that ask for more than one of something ("2 mugs", "three", "a pair"). */
const MANY = /(?<![\d:.,/-])\b(?:[2-9]|[1-9]\d)\b(?![\d:.,/-])|\b(?:two|three|four|five|six|seven|eight|nine|ten|dozen|pair|couple|several|few|both|each|every|all)\b/i;

/** Words of a cart button that say what it adds, less the adding itself. */
const CART_WORDS = new Set(['add', 'buy', 'now', 'the', 'to', 'your', 'my', 'cart', 'basket', 'bag', 'trolley', 'one', 'item', 'this']);

/** The label of a button line ("[2] button "Add Green Mug to cart"" → its label), when it adds to a cart. */
export function cartButton(line: string): string | undefined {
  const label = /^\[\d+\] (?:button|link) "((?:[^"\\]|\\.)*)"/.exec(line.trim())?.[1].trim();
  return label && CART_ADD.test(label) ? label : undefined;
}

/** Text that says something went into a cart ("In your cart: Green Mug", "Added to bag", "Basket (1)"). */
const ADDED = /\b(?:cart|basket|bag|trolley|added)\b/i;

/** Whether text that appeared since a press of a cart button says something went into the cart (a size still to choose does not). */
export const addedShown = (appeared: string[]): boolean => appeared.some((line) => ADDED.test(line));

/** Whether the task asks for one of what it adds: no count, no "both" or "each". */
export const asksForOne = (task: string): boolean => !MANY.test(task);

/** The words of a cart button's label that name what it adds. */
const itemWords = (label: string) => (label.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => !CART_WORDS.has(word));

/**
 * Of the cart buttons of a page, the one the task names, when it names one: the only button
 * one of whose own words (a word the other buttons' labels do not hold) the task says. "Add
 * the Green Mug to the cart. Add nothing else." names "Add Green Mug to cart" of three.
 */
export function cartButtonNamed(task: string, lines: { index: number; line: string }[]): { index: number; label: string } | undefined {
  const buttons = lines.flatMap(({ index, line }) => {
    const label = cartButton(line);
    return label ? [{ index, label, words: itemWords(label) }] : [];
  });
  if (buttons.length < 2) return undefined;
  const said = new Set(task.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  const named = buttons.filter((button) => button.words.some((word) => said.has(word) && buttons.every((other) => other === button || !other.words.includes(word))));
  return named.length === 1 ? { index: named[0].index, label: named[0].label } : undefined;
}

/**
 * A press of a cart button the task does not name while it names another of the page: held,
 * what the task names said. The default model, the Green Mug in the cart, pressed "Add White
 * Mug to cart" every few steps of a task that said "Add nothing else".
 */
export function otherItemNote(pressed: { index: number; label: string }, named: { index: number; label: string }): string {
  return `Not pressed: [${pressed.index}] "${pressed.label}" adds what the task does not name; the task names [${named.index}] "${named.label}". If it is in the cart already, call done. If [${pressed.index}] is what you meant, press it again at your next step.`;
}

/**
 * A press of a cart button pressed already in a task that asks for one: held, whatever came
 * between. The default model, held once after its second press, pressed another button, then
 * the same one again, and again, until the cart held 18 mugs.
 */
export function againNote(index: number, label: string): string {
  return `${REPEAT_HELD} you pressed [${index}] "${label}" already in this task, and each press adds one more. The task asks for one: if the page shows it in the cart, call done. If the task asks for more, press it again at your next step.`;
}

/**
 * Presses of two elements of one page in turn (A, B, A, B): each only shows again what it
 * showed before. The default model, asked for a battery life behind a "Specifications" tab,
 * pressed "Overview" and "Reviews" in turn for ten steps.
 */
export class TurnTaking {
  private presses: { element: string; url: string }[] = [];

  /** A performed action: a press of `element` (its line without index) on the page at `url`, or any other action. */
  note(tool: string, element: string, url: string): void {
    if (tool !== 'click_element' || !element) {
      this.presses = [];
      return;
    }
    this.presses = [...this.presses, { element, url }].slice(-4);
  }

  /** The two elements pressed in turn by the last four presses, on one page; then counted afresh. */
  inTurn(): [string, string] | undefined {
    const [a, b, c, d] = this.presses;
    if (!d || a.element !== c.element || b.element !== d.element || a.element === b.element || new Set(this.presses.map((p) => p.url.replace(/#.*$/, ''))).size !== 1) return undefined;
    this.presses = [];
    return [a.element, b.element];
  }

  reset(): void {
    this.presses = [];
  }
}

/**
 * What the model is told of two elements pressed in turn, with the other elements of their role
 * on the page (a tab not pressed yet). Two radios of a group whose one the task names (`asked`):
 * that one, and the button that sends it (`save`), not another radio. Told "Press another:
 * [3] radio "Premium"", the default model, asked for the Standard plan, pressed Premium.
 */
export function turnNote(pair: [string, string], elements: { index: number; role: string; label: string; line: string }[], asked?: { index: number; label: string; checked: boolean }, save?: string): string {
  const label = (element: string) => /"((?:[^"\\]|\\.)*)"/.exec(element)?.[1] ?? element;
  if (asked) {
    const then = save ? `press ${save}` : 'go on with the rest of the task';
    const next = asked.checked ? `[${asked.index}] radio "${asked.label}" is chosen now, as the task asks: ${then}.` : `The task names [${asked.index}] radio "${asked.label}": press it once, then ${then}.`;
    return `Note: you pressed "${label(pair[0])}" and "${label(pair[1])}" in turn, twice each; each press undoes the one before. ${next}`;
  }
  const role = pair[0].split(' ')[0];
  const others = elements.filter((e) => e.role === role && ![label(pair[0]), label(pair[1])].includes(e.label)).slice(0, 3);
  const instead = others.length ? ` Press another: ${others.map((e) => `[${e.index}] ${e.role} "${e.label}"`).join(', ')}; or, if` : ' Press another element, or, if';
  return `Note: you pressed "${label(pair[0])}" and "${label(pair[1])}" in turn, twice each; each only shows again what it showed before.${instead} the page showed what the task asks, call done with it.`;
}
