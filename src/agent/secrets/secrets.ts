/**
 * A task's secrets on the worker. The model writes `<secret>name</secret>`; the value is put
 * in only when an action types it, and only on a page whose host the entry's `match`
 * covers. Everything the worker sends out (to the model, to events, to the task's result
 * and records, to logs) goes through `mask`, which puts the placeholder back wherever a
 * value shows up, also URL- or JSON-encoded and in any letter case.
 */
import type { SecretEntry, TotpSeed } from '../../contracts/session-types';
import { totpCode } from './totp';
import { specificity } from '../../contracts/host-patterns';
import { originOf, parseSecretMatch, refusedByDefault, sameSite, secretMatchCovers, type Origin, type SecretMatch } from '../../contracts/secret-match';

export type { SecretEntry };

/** A placeholder in the model's text; names are those SECRET_NAME allows. */
const PLACEHOLDER = /<secret>\s*([^<>\s]{1,64})\s*<\/secret>/g;
/** Values shorter than this are masked only where they stand alone (not inside words or numbers). */
const WHOLE_WORD_BELOW = 4;
/** Any part of a value this long or longer is masked wherever it shows up; shorter values are masked whole. */
export const SUBSTRING_MIN = 8;

export const placeholder = (name: string): string => `<secret>${name}</secret>`;

interface Compiled {
  name: string;
  /** The value typed; for a one-time-code field, its seed (masked, never typed). */
  value: string;
  /** A one-time-code field: what is typed is the code valid at that moment. */
  seed?: TotpSeed;
  /** null: `all`. */
  pattern: SecretMatch | null;
  matchText: string;
}

export type Substitution = { ok: true; text: string; used: string[] } | { ok: false; error: string };

export class TaskSecrets {
  private readonly entries: Compiled[] = [];
  private readonly masks: { variant: string; lower: string; name: string; wholeWord: boolean }[] = [];
  /** Every SUBSTRING_MIN-character piece of the long values' forms (lower case, no whitespace), with the value's name. */
  private readonly grams = new Map<string, string>();

  /**
   * @param onCode told each one-time code as it is typed, so everything sent out later masks
   * it too (the session's vault adds it to what it masks).
   */
  constructor(
    entries: SecretEntry[],
    private readonly onCode?: (name: string, code: string) => void,
    private readonly now: () => number = Date.now,
  ) {
    for (const entry of entries) {
      const parsed = entry.match.trim().toLowerCase() === 'all' ? null : parseSecretMatch(entry.match);
      if (typeof parsed === 'string') continue; // refused by the API already
      for (const [name, value] of Object.entries(entry.fields)) {
        if (!value) continue;
        const matchText = parsed ? entry.match.trim().toLowerCase() : 'all';
        if (typeof value === 'string') this.entries.push({ name, value, pattern: parsed, matchText });
        else this.entries.push({ name, value: value.totp, seed: value, pattern: parsed, matchText });
      }
    }
    const seen = new Set<string>();
    for (const { name, value } of this.entries) {
      if (compact(value).length >= SUBSTRING_MIN) {
        for (const form of longForms(value)) {
          const chars = [...compact(form)].map((ch) => (ch.toLowerCase().length === 1 ? ch.toLowerCase() : ch));
          for (let i = 0; i + SUBSTRING_MIN <= chars.length; i++) {
            const gram = chars.slice(i, i + SUBSTRING_MIN).join('');
            if (!this.grams.has(gram)) this.grams.set(gram, name);
          }
        }
        continue;
      }
      for (const variant of encodings(value)) {
        const lower = variant.toLowerCase();
        if (seen.has(lower) || lower.length !== variant.length) continue;
        seen.add(lower);
        this.masks.push({ variant, lower, name, wholeWord: [...value].length < WHOLE_WORD_BELOW });
      }
    }
    // Longer first: a value that contains another is masked whole.
    this.masks.sort((first, second) => second.variant.length - first.variant.length);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The names the model may use, with where each works (for the task prompt). */
  catalogue(): { name: string; matches: string[]; oneTimeCode?: true }[] {
    const byName = new Map<string, { matches: string[]; oneTimeCode?: true }>();
    for (const entry of this.entries) {
      const known = byName.get(entry.name) ?? { matches: [] };
      byName.set(entry.name, { matches: [...known.matches, entry.matchText], ...(known.oneTimeCode || entry.seed ? { oneTimeCode: true as const } : {}) });
    }
    return [...byName].map(([name, about]) => ({ name, ...about }));
  }

  /** Whether `text` holds any placeholder. */
  static uses(text: string): boolean {
    PLACEHOLDER.lastIndex = 0;
    return PLACEHOLDER.test(text);
  }

  /**
   * Puts the values into `text` for a field in the frame at `pageUrl`, which is inside the
   * frames at `above` (innermost first; none for the top page). An entry fits when its `match`
   * covers the field's own frame, and every frame above is the same site as that frame or is
   * covered by the entry too. An unknown name, or a secret no entry of which fits, fails the
   * whole text: nothing is typed.
   */
  substitute(text: string, pageUrl: string, above: string[] = []): Substitution {
    const used: string[] = [];
    let error: string | undefined;
    const field = { url: pageUrl, origin: originOf(pageUrl) };
    const outer = above.map((url) => ({ url, origin: originOf(url) }));
    const out = text.replace(PLACEHOLDER, (whole, name: string) => {
      if (error) return whole;
      const candidates = this.entries.filter((entry) => entry.name === name);
      if (!candidates.length) {
        const known = this.catalogue().map((entry) => entry.name);
        error = `There is no secret named "${name}"${known.length ? `; the secrets are: ${known.join(', ')}` : ''}. Nothing was typed.`;
        return whole;
      }
      const chosen = this.fitting(name, candidates, field, outer);
      if (typeof chosen === 'string') {
        error = chosen;
        return whole;
      }
      used.push(name);
      if (!chosen.seed) return chosen.value;
      const code = totpCode(chosen.seed, this.now());
      this.onCode?.(name, code);
      return code;
    });
    return error ? { ok: false, error } : { ok: true, text: out, used };
  }

  /**
   * The most specific entry of `name` that covers the field's frame and whose every frame
   * above is the same site as the field's or covered too; or what the model is told.
   */
  private fitting(name: string, candidates: Compiled[], field: FramePlace, outer: FramePlace[]): Compiled | string {
    const target = field.origin;
    const covers = (entry: Compiled, origin: Origin | null) => entry.pattern === null || (origin !== null && secretMatchCovers(entry.pattern, origin));
    const covering = candidates.filter((entry) => covers(entry, target));
    const where = candidates.map((entry) => entry.matchText).join(', ');
    const show = describeFrame(candidates);
    if (!covering.length) {
      const inside = outer.length ? ` (a frame inside ${show(outer[outer.length - 1])})` : '';
      const hint = strictnessHint(candidates, target);
      return `The secret "${name}" may only be used on ${where}, and this ${outer.length ? 'field is on' : 'page is'} ${hint ? hint.origin : show(field)}${inside}.${hint?.text ?? ''} Nothing was typed.`;
    }
    const siteOk = (frame: FramePlace) => frame.origin !== null && target !== null && sameSite(frame.origin, target);
    const fitting = covering
      .filter((entry) => outer.every((frame) => entry.pattern === null || siteOk(frame) || covers(entry, frame.origin)))
      .sort((first, second) => rank(second) - rank(first));
    if (fitting.length) return fitting[0];
    const foreign = outer.find((frame) => !siteOk(frame))!;
    return `The secret "${name}" may only be used on ${where}: this field is on ${show(field)}, but in a frame embedded by ${show(foreign)}, another site the secret does not name. Nothing was typed.`;
  }

  /**
   * `text` with every value replaced by its placeholder. Values shorter than SUBSTRING_MIN are
   * masked where they appear whole; longer ones wherever any part of SUBSTRING_MIN or more
   * characters of them (or of their encodings) appears, whatever whitespace is removed, added
   * or changed in between: a value cut short, re-spaced or split over lines is masked too.
   */
  mask(text: string): string {
    if (!text || (!this.masks.length && !this.grams.size)) return text;
    return this.maskParts(this.maskWhole(text));
  }

  /** Exact matches of the short values (and their encodings). */
  private maskWhole(text: string): string {
    if (!this.masks.length) return text;
    let lower = text.toLowerCase();
    // Letter case changes length for a few characters (İ): then only exact matches are masked.
    const caseless = lower.length === text.length;
    if (!caseless) lower = text;
    let out = text;
    for (const mask of this.masks) {
      const needle = caseless ? mask.lower : mask.variant;
      let from = 0;
      let at = lower.indexOf(needle, from);
      if (at < 0) continue;
      let rebuilt = '';
      let rebuiltLower = '';
      let last = 0;
      while (at >= 0) {
        const end = at + needle.length;
        if (!mask.wholeWord || (!isWordChar(lower[at - 1]) && !isWordChar(lower[end]))) {
          const ph = placeholder(mask.name);
          rebuilt += out.slice(last, at) + ph;
          rebuiltLower += lower.slice(last, at) + (caseless ? ph.toLowerCase() : ph);
          last = end;
        }
        from = end;
        at = lower.indexOf(needle, from);
      }
      out = rebuilt + out.slice(last);
      lower = rebuiltLower + lower.slice(last);
    }
    return out;
  }

  /**
   * Every run of `text` made of SUBSTRING_MIN-character pieces of a long value: the text is
   * read without its whitespace (so "a  b", "a b" and "ab" read alike), each piece looked up,
   * and each run of pieces (with the whitespace inside it) replaced by one placeholder.
   * Placeholders already in the text are left as they are.
   */
  private maskParts(text: string): string {
    if (!this.grams.size || text.length < SUBSTRING_MIN) return text;
    const kept = placeholderSpans(text);
    const chars: string[] = [];
    const at: number[] = [];
    for (let i = 0, k = 0; i < text.length; i++) {
      while (k < kept.length && kept[k][1] <= i) k++;
      if (k < kept.length && kept[k][0] <= i) {
        // A placeholder breaks the text: no piece reaches across it.
        chars.push('\u0000');
        at.push(i);
        i = kept[k][1] - 1;
        continue;
      }
      const ch = text[i];
      if (/\s/.test(ch)) continue;
      const low = ch.toLowerCase();
      chars.push(low.length === 1 ? low : ch);
      at.push(i);
    }
    const names: (string | undefined)[] = new Array(chars.length);
    // joined[j]: one piece covers both j and j + 1 (two values side by side stay two runs).
    const joined: boolean[] = new Array(chars.length).fill(false);
    for (let i = 0; i + SUBSTRING_MIN <= chars.length; i++) {
      const name = this.grams.get(chars.slice(i, i + SUBSTRING_MIN).join(''));
      if (name === undefined) continue;
      for (let j = i; j < i + SUBSTRING_MIN; j++) names[j] ??= name;
      for (let j = i; j < i + SUBSTRING_MIN - 1; j++) joined[j] = true;
    }
    let out = '';
    let last = 0;
    for (let i = 0; i < chars.length; ) {
      const name = names[i];
      if (name === undefined) {
        i++;
        continue;
      }
      // One placeholder per run, named after the value most of it comes from (values may share pieces).
      const count = new Map<string, number>();
      let runEnd = i;
      for (; ; runEnd++) {
        count.set(names[runEnd]!, (count.get(names[runEnd]!) ?? 0) + 1);
        if (!joined[runEnd]) break;
      }
      const named = [...count].reduce((best, entry) => (entry[1] > best[1] ? entry : best))[0];
      out += text.slice(last, at[i]) + placeholder(named);
      last = at[runEnd] + 1;
      i = runEnd + 1;
    }
    return out + text.slice(last);
  }

  /** Masks every string inside a JSON-like value. */
  maskDeep<T>(value: T): T {
    if (typeof value === 'string') return this.mask(value) as T;
    if (Array.isArray(value)) return value.map((item) => this.maskDeep(item)) as T;
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.maskDeep(item)])) as T;
    return value;
  }
}

const isWordChar = (ch: string | undefined): boolean => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);

/** How a value may show up in a page, a URL or a JSON text. */
function encodings(value: string): string[] {
  const uri = encodeURIComponent(value);
  const variants = [value, uri, uri.replace(/%20/g, '+'), new URLSearchParams({ v: value }).toString().slice(2), JSON.stringify(value).slice(1, -1), escapeHtml(value)];
  // Percent escapes may be written in lower case.
  variants.push(...variants.map((variant) => variant.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())));
  return [...new Set(variants.filter(Boolean))];
}

/** A frame's address and its origin (null when it is not an http(s) address). */
interface FramePlace {
  url: string;
  origin: Origin | null;
}

/** How specific an entry is: an exact host beats a wildcard, a longer domain a shorter one, a named scheme none; `all` least. */
const rank = (entry: Compiled): number => (entry.pattern ? specificity(entry.pattern) + (entry.pattern.scheme ? 1 : 0) : -1);

/** How a frame is named in a refusal: its host, with its port when an entry names one, and its scheme when an entry names one. */
function describeFrame(candidates: Compiled[]): (frame: FramePlace) => string {
  const withPort = candidates.some((entry) => entry.pattern?.port !== undefined);
  const withScheme = candidates.some((entry) => entry.pattern?.scheme !== undefined);
  return ({ url, origin }) => (origin ? `${withScheme ? `${origin.scheme}://` : ''}${origin.host}${withPort ? `:${origin.port}` : ''}` : url);
}

/**
 * A page whose host an entry names, refused for the scheme or port the entry leaves unsaid:
 * its whole origin, and what the match would have to say to allow it. Undefined otherwise.
 */
function strictnessHint(candidates: Compiled[], origin: Origin | null): { origin: string; text: string } | undefined {
  if (!origin || !candidates.some((entry) => entry.pattern && refusedByDefault(entry.pattern, origin))) return undefined;
  const whole = `${origin.scheme}://${origin.host}:${origin.port}`;
  return { origin: whole, text: ` A match without a scheme is for https only (and http on this machine's own addresses), and without a port for the scheme's default port: "${whole}" would allow this page.` };
}

/** The value without its whitespace (what the pieces of long values are read from). */
const compact = (text: string): string => text.replace(/\s+/g, '');

/** A long value's forms whose every piece is masked: as is, encoded for URLs, forms, JSON and HTML, and in base64. */
function longForms(value: string): string[] {
  const forms = encodings(value);
  for (const form of [value, compact(value), value.replace(/\s+/g, ' ')]) {
    const bytes = Buffer.from(form, 'utf8');
    // A part of the value is encoded from any of three byte offsets: each gives other base64 characters.
    for (let offset = 0; offset < 3 && offset < bytes.length; offset++) {
      const b64 = bytes.subarray(offset).toString('base64').replace(/=+$/, '');
      // The last character also depends on what follows the part: only whole 6-bit groups are kept.
      const inner = b64.slice(0, Math.floor(((bytes.length - offset) * 4) / 3));
      forms.push(inner, inner.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...new Set(forms.filter(Boolean))];
}

/** Where the placeholders already in a text are, as [start, end) pairs in order. */
function placeholderSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  for (const match of text.matchAll(PLACEHOLDER)) spans.push([match.index, match.index + match[0].length]);
  return spans;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
