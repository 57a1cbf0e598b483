/**
 * A greedy small model sometimes falls into a loop: the same sentence again and again until
 * max_tokens (a done message of 16,310 characters, 272 s on two cores). The answer is cut off
 * once its end repeats itself: the last LOOP_SPAN characters (or three periods, when longer)
 * equal the text one period earlier, for a period of MIN_PERIOD to MAX_PERIOD characters.
 */
const MIN_PERIOD = 8;
const MAX_PERIOD = 300;
const LOOP_SPAN = 300;

/** Whether `text` ends in a loop: a piece of MIN_PERIOD..MAX_PERIOD characters repeated over its last LOOP_SPAN characters at least. */
export function endsInLoop(text: string): boolean {
  for (let period = MIN_PERIOD; period <= MAX_PERIOD; period++) {
    const span = Math.max(LOOP_SPAN, 3 * period);
    if (text.length < span + period) return false;
    if (text.endsWith(text.slice(text.length - span - period, text.length - period))) return true;
  }
  return false;
}

/** Watches an answer as it is generated: `add` returns true once the text ends in a loop. Checked every few chunks. */
export function loopWatch(): { add(chunk: string): boolean; readonly looped: boolean } {
  let text = '';
  let looped = false;
  let unchecked = 0;
  return {
    add(chunk: string): boolean {
      if (looped) return true;
      text += chunk;
      unchecked += chunk.length;
      if (unchecked < 16) return false;
      unchecked = 0;
      looped = endsInLoop(text);
      return looped;
    },
    get looped() {
      return looped;
    },
  };
}
