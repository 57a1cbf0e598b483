/**
 * Where the answer copies the prompt: the model's free text (its thought, a value it types, a
 * `done` message) often repeats a run of what it was shown (an element's label, a line of the
 * page, the task's values, a note of the service). When the answer's last tokens were written
 * before, the tokens that followed them there are the likely next. The `answer` token predictor
 * (model-server.ts) guesses them where the grammar leaves the text to the model (answer-guess.ts
 * has no guess), and the model checks them in one pass. Pure: no model, no I/O.
 */

/** The answer's last tokens that must have been written before for a guess (fewer match by chance). */
export const COPY_PATTERN_TOKENS = 4;
/** Tokens guessed at most: a refuted guess costs the pass's extra tokens. */
export const COPY_GUESS_TOKENS = 3;

/**
 * The tokens that followed the latest earlier occurrence, in `tokens` before `searchEnd`, of
 * the longest run of `tokens`' last tokens (at least `minPattern`, at most `maxPattern`); []
 * when the last `minPattern` tokens were not written there, or were followed by different
 * tokens in different places (a list's lines that start alike: the copy could go on either way). The longer the run the answer has
 * copied, the more it guesses: half the run, at most `maxGuess`, so that a run that only starts
 * alike costs little when the answer goes its own way.
 */
export function copyGuess<T>(tokens: readonly T[], opts: { searchEnd?: number; minPattern?: number; maxPattern?: number; maxGuess?: number } = {}): T[] {
  const minPattern = opts.minPattern ?? COPY_PATTERN_TOKENS;
  const maxPattern = Math.max(minPattern, opts.maxPattern ?? 16);
  const maxGuess = opts.maxGuess ?? COPY_GUESS_TOKENS;
  const n = tokens.length;
  const searchEnd = Math.min(opts.searchEnd ?? n - 1, n - 1);
  if (n <= minPattern || maxGuess <= 0) return [];
  let bestEnd = -1;
  let bestLength = 0;
  /** What followed each earlier run of `minPattern` tokens or more: differing, the copy has no one next. */
  let next: T | undefined;
  // `end` is the index after an earlier run ending like the answer; the latest of the longest wins.
  for (let end = searchEnd; end >= minPattern; end--) {
    let length = 0;
    while (length < maxPattern && length < end && tokens[end - 1 - length] === tokens[n - 1 - length]) length++;
    if (length < minPattern) continue;
    if (bestEnd >= 0 && tokens[end] !== next) return [];
    next = tokens[end];
    if (length > bestLength) {
      bestEnd = end;
      bestLength = length;
    }
  }
  if (bestEnd < 0) return [];
  return tokens.slice(bestEnd, Math.min(searchEnd, bestEnd + Math.min(maxGuess, Math.floor(bestLength / 2))));
}

/** Whether `written` (the answer's JSON so far) ends inside a string: there the text is the model's own. */
export function insideString(written: string): boolean {
  let inside = false;
  for (let i = 0; i < written.length; i++) {
    const c = written[i];
    if (inside && c === '\\') i++;
    else if (c === '"') inside = !inside;
  }
  return inside;
}
