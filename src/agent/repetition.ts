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
