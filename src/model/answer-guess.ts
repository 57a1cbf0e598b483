/**
 * What the answer's grammar leaves to come next, read from the answer written so far: the
 * keys, quotes and brackets around the model's choices, the rest of a tool's name or of an
 * element's label once its start tells them apart. The `answer` token predictor
 * (model-server.ts) guesses these tokens and the model checks them in one pass instead of
 * writing them one pass each. Pure: no model, no I/O.
 *
 * The guess follows the spacing the model writes (`{"thought": "…", "actions": [{"name": …}]}`);
 * reading the answer accepts any whitespace the grammar allows. Where the grammar leaves a
 * choice the guess stops, but for the end of the action list: one action is the usual answer.
 */
import type { GrammarSchema } from './answer-format';

type Walk =
  /** The value ends at `pos` of the text. */
  | { kind: 'done'; pos: number }
  /** The text ends inside the value: `guess` comes next; `closes` when it ends the value. */
  | { kind: 'open'; guess: string; closes: boolean }
  | { kind: 'fail' };

const FAIL: Walk = { kind: 'fail' };
const WS = /[ \t\n\r]/;

function skipWs(text: string, pos: number): number {
  while (pos < text.length && WS.test(text[pos])) pos++;
  return pos;
}

/** A fixed piece of JSON (`{`, `"name":`, `,`); `tail` is the spacing the model writes after it. */
interface Lit {
  lit: string;
  tail?: string;
}

function walkLit(part: Lit, text: string, at: number): Walk {
  const pos = skipWs(text, at);
  const rest = text.slice(pos);
  if (rest.length >= part.lit.length) {
    if (!rest.startsWith(part.lit)) return FAIL;
    const end = pos + part.lit.length;
    // Right after the piece: the spacing the model writes after it comes next.
    if (end === text.length && part.tail) return { kind: 'open', guess: part.tail, closes: true };
    return { kind: 'done', pos: end };
  }
  if (!part.lit.startsWith(rest)) return FAIL;
  return { kind: 'open', guess: part.lit.slice(rest.length) + (part.tail ?? ''), closes: true };
}

/** A sequence of pieces and values; once the text ends, what each closed guess lets follow. */
function walkSeq(parts: (Lit | GrammarSchema)[], text: string, at: number): Walk {
  let pos = at;
  for (let i = 0; i < parts.length; i++) {
    const w = walkPart(parts[i], text, pos);
    if (w.kind === 'fail') return w;
    if (w.kind === 'done') {
      pos = w.pos;
      continue;
    }
    let guess = w.guess;
    let closes = w.closes;
    for (let j = i + 1; closes && j < parts.length; j++) {
      const next = walkPart(parts[j], '', 0);
      if (next.kind !== 'open') break;
      guess += next.guess;
      closes = next.closes;
    }
    return { kind: 'open', guess, closes: closes };
  }
  return { kind: 'done', pos };
}

const isLit = (p: Lit | GrammarSchema): p is Lit => typeof (p as Lit).lit === 'string';

function walkPart(part: Lit | GrammarSchema, text: string, pos: number): Walk {
  return isLit(part) ? walkLit(part, text, pos) : walkValue(part, text, pos);
}

/** One of fixed JSON texts (a const, an enum, true/false/null). */
function walkChoices(choices: string[], text: string, at: number): Walk {
  const pos = skipWs(text, at);
  const rest = text.slice(pos);
  const numeric = (c: string) => /^-?\d/.test(c);
  const full = choices.filter((c) => rest.startsWith(c) && (rest.length > c.length || !numeric(c)) && !(numeric(c) && /[\d.eE+-]/.test(rest[c.length] ?? '')));
  const partial = choices.filter((c) => c.length > rest.length && c.startsWith(rest));
  // A number the text may still lengthen (`1` of `12`) is not yet chosen.
  const open = choices.filter((c) => c === rest && numeric(c));
  if (partial.length || open.length) {
    if (full.length || open.length) return { kind: 'open', guess: '', closes: false };
    const rests = [...new Set(partial.map((c) => c.slice(rest.length)))];
    return { kind: 'open', guess: commonPrefix(rests), closes: rests.length === 1 };
  }
  if (!full.length) return FAIL;
  return { kind: 'done', pos: pos + Math.max(...full.map((c) => c.length)) };
}

function walkString(text: string, at: number): Walk {
  const pos = skipWs(text, at);
  if (pos === text.length) return { kind: 'open', guess: '"', closes: false };
  if (text[pos] !== '"') return FAIL;
  for (let i = pos + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return { kind: 'done', pos: i + 1 };
  }
  return { kind: 'open', guess: '', closes: false };
}

function walkNumber(text: string, at: number): Walk {
  const pos = skipWs(text, at);
  const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(pos));
  if (pos === text.length || (m && pos + m[0].length === text.length) || (!m && /^-?\d*\.?$/.test(text.slice(pos)))) return { kind: 'open', guess: '', closes: false };
  return m ? { kind: 'done', pos: pos + m[0].length } : FAIL;
}

function walkAlternatives(walks: Walk[]): Walk {
  const live = walks.filter((w) => w.kind !== 'fail');
  if (!live.length) return FAIL;
  const done = live.filter((w): w is Extract<Walk, { kind: 'done' }> => w.kind === 'done');
  if (done.length === live.length) return new Set(done.map((d) => d.pos)).size === 1 ? done[0] : { kind: 'open', guess: '', closes: false };
  if (done.length) return { kind: 'open', guess: '', closes: false };
  const open = live as Extract<Walk, { kind: 'open' }>[];
  const guesses = [...new Set(open.map((o) => o.guess))];
  return { kind: 'open', guess: commonPrefix(guesses), closes: guesses.length === 1 && open.every((o) => o.closes) };
}

function walkArray(s: Extract<GrammarSchema, { type: 'array' }>, text: string, at: number): Walk {
  const item = (s.items ?? {}) as GrammarSchema;
  const min = s.minItems ?? 0;
  const max = s.maxItems ?? Infinity;
  const open = walkLit({ lit: '[' }, text, at);
  if (open.kind !== 'done') return open.kind === 'open' ? { kind: 'open', guess: open.guess + (min > 0 ? startGuess(item) : ''), closes: false } : open;
  let pos = open.pos;
  for (let count = 0; ; count++) {
    if (count > 0 || min === 0) {
      const p = skipWs(text, pos);
      if (p === text.length) {
        // After an item: the list's end is the likely next (one action is the usual answer).
        if (count >= min) return { kind: 'open', guess: ']', closes: true };
        return { kind: 'open', guess: `, ${startGuess(item)}`, closes: false };
      }
      if (text[p] === ']') return { kind: 'done', pos: p + 1 };
      if (count > 0) {
        if (text[p] !== ',' || count >= max) return FAIL;
        pos = p + 1;
        if (skipWs(text, pos) === text.length) return { kind: 'open', guess: pos === text.length ? ` ${startGuess(item)}` : startGuess(item), closes: false };
      }
    }
    const w = walkValue(item, text, pos);
    if (w.kind !== 'done') {
      return w.kind === 'open' && w.closes ? { kind: 'open', guess: w.guess + (count + 1 >= min ? ']' : ''), closes: count + 1 >= min } : w;
    }
    pos = w.pos;
  }
}

/** What a value of `s` starts with, nothing written of it yet. */
function startGuess(s: GrammarSchema): string {
  const w = walkValue(s, '', 0);
  return w.kind === 'open' ? w.guess : '';
}

function walkObject(s: Extract<GrammarSchema, { type: 'object' }>, text: string, at: number): Walk {
  const keys = Object.keys(s.properties);
  if (!keys.length) {
    // A map of any keys: only its braces are known.
    const open = walkLit({ lit: '{' }, text, at);
    if (open.kind !== 'done') return open.kind === 'open' ? { kind: 'open', guess: open.guess, closes: false } : open;
    return scanAny(text, open.pos - 1);
  }
  const parts: (Lit | GrammarSchema)[] = [{ lit: '{' }];
  keys.forEach((key, i) => {
    if (i > 0) parts.push({ lit: ',', tail: ' ' });
    parts.push({ lit: `${JSON.stringify(key)}:`, tail: ' ' }, s.properties[key]);
  });
  parts.push({ lit: '}' });
  return walkSeq(parts, text, at);
}

/** Any JSON value starting at `at` (a map of any keys): where it ends, or open with no guess. */
function scanAny(text: string, at: number): Walk {
  const pos = skipWs(text, at);
  let depth = 0;
  let inString = false;
  for (let i = pos; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      if (!inString && depth === 0) return { kind: 'done', pos: i + 1 };
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return { kind: 'done', pos: i + 1 };
      if (depth < 0) return FAIL;
    } else if (depth === 0 && /[,\s]/.test(c) && i > pos) return { kind: 'done', pos: i };
  }
  return { kind: 'open', guess: '', closes: false };
}

function walkValue(s: GrammarSchema, text: string, at: number): Walk {
  if ('impossible' in s) return FAIL;
  if ('const' in s) return walkChoices([JSON.stringify(s.const)], text, at);
  if ('enum' in s) return walkChoices(s.enum.map((v) => JSON.stringify(v)), text, at);
  if ('oneOf' in s) return walkAlternatives(s.oneOf.map((alt) => walkValue(alt, text, at)));
  const type = s.type;
  if (Array.isArray(type)) return walkAlternatives(type.map((t) => walkValue({ type: t }, text, at)));
  switch (type) {
    case 'string':
      return walkString(text, at);
    case 'number':
    case 'integer':
      return walkNumber(text, at);
    case 'boolean':
      return walkChoices(['true', 'false'], text, at);
    case 'null':
      return walkChoices(['null'], text, at);
    case 'array':
      return walkArray(s as Extract<GrammarSchema, { type: 'array' }>, text, at);
    case 'object':
      return walkObject(s as Extract<GrammarSchema, { type: 'object' }>, text, at);
    default:
      return { kind: 'open', guess: '', closes: false };
  }
}

/**
 * The text the grammar of `schema` lets follow `written` for sure (and the end of a list
 * after its first item), in the model's spacing; '' when the next is the model's choice, the
 * answer is complete, or the text does not read as the schema's.
 */
export function guessNext(schema: GrammarSchema, written: string): string {
  const w = walkValue(schema, written, 0);
  return w.kind === 'open' ? w.guess : '';
}

function commonPrefix(texts: string[]): string {
  if (!texts.length) return '';
  let n = texts[0].length;
  for (const t of texts) {
    let i = 0;
    while (i < n && i < t.length && t[i] === texts[0][i]) i++;
    n = i;
  }
  return texts[0].slice(0, n);
}
