/**
 * A task's secrets on the worker. The model writes `<secret>name</secret>`; the value is put
 * in only when an action types it, and only on a page whose host the entry's `match`
 * covers. Everything the worker sends out (to the model, to events, to the task's result
 * and records, to logs) goes through `mask`, which puts the placeholder back wherever a
 * value shows up, also URL- or JSON-encoded and in any letter case.
 */
import type { SecretEntry } from '../../contracts/session-types';
import { hostMatches, parseHostPattern, specificity, urlHost, type HostPattern } from '../../contracts/host-patterns';

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
  value: string;
  /** null: `all`. */
  pattern: HostPattern | null;
  matchText: string;
}

export type Substitution = { ok: true; text: string; used: string[] } | { ok: false; error: string };

export class TaskSecrets {
  private readonly entries: Compiled[] = [];
  private readonly masks: { variant: string; lower: string; name: string; wholeWord: boolean }[] = [];
  /** Every SUBSTRING_MIN-character piece of the long values' forms (lower case, no whitespace), with the value's name. */
  private readonly grams = new Map<string, string>();

  constructor(entries: SecretEntry[]) {
    for (const e of entries) {
      const parsed = e.match.trim().toLowerCase() === 'all' ? null : parseHostPattern(e.match);
      if (typeof parsed === 'string') continue; // refused by the API already
      for (const [name, value] of Object.entries(e.fields)) {
        if (!value) continue;
        this.entries.push({ name, value, pattern: parsed, matchText: parsed ? e.match.trim().toLowerCase() : 'all' });
      }
    }
    const seen = new Set<string>();
    for (const { name, value } of this.entries) {
      if (compact(value).length >= SUBSTRING_MIN) {
        for (const form of longForms(value)) {
          const c = [...compact(form)].map((ch) => (ch.toLowerCase().length === 1 ? ch.toLowerCase() : ch));
          for (let i = 0; i + SUBSTRING_MIN <= c.length; i++) {
            const gram = c.slice(i, i + SUBSTRING_MIN).join('');
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
    this.masks.sort((a, b) => b.variant.length - a.variant.length);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The names the model may use, with where each works (for the task prompt). */
  catalogue(): { name: string; matches: string[] }[] {
    const byName = new Map<string, string[]>();
    for (const e of this.entries) byName.set(e.name, [...(byName.get(e.name) ?? []), e.matchText]);
    return [...byName].map(([name, matches]) => ({ name, matches }));
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
    const target = urlHost(pageUrl);
    const outer = above.map((u) => ({ url: u, host: urlHost(u) }));
    const out = text.replace(PLACEHOLDER, (whole, name: string) => {
      if (error) return whole;
      const candidates = this.entries.filter((e) => e.name === name);
      if (!candidates.length) {
        const known = this.catalogue().map((c) => c.name);
        error = `There is no secret named "${name}"${known.length ? `; the secrets are: ${known.join(', ')}` : ''}. Nothing was typed.`;
        return whole;
      }
      const covering = candidates.filter((e) => e.pattern === null || (target !== null && hostMatches(e.pattern, target)));
      const where = candidates.map((e) => e.matchText).join(', ');
      // Ports are named when an entry names one (else the host alone says it).
      const withPort = candidates.some((e) => e.pattern?.port !== undefined);
      const show = (f: { url: string; host: { host: string; port: string } | null }): string => (f.host ? (withPort ? `${f.host.host}:${f.host.port}` : f.host.host) : f.url);
      if (!covering.length) {
        const inside = outer.length ? ` (a frame inside ${show(outer[outer.length - 1])})` : '';
        error = `The secret "${name}" may only be used on ${where}, and this ${outer.length ? 'field is on' : 'page is'} ${show({ url: pageUrl, host: target })}${inside}. Nothing was typed.`;
        return whole;
      }
      const fitting = covering
        .filter((e) => outer.every((o) => e.pattern === null || (o.host !== null && target !== null && (sameSite(o.host.host, target.host) || hostMatches(e.pattern, o.host)))))
        .sort((a, b) => (b.pattern ? specificity(b.pattern) : -1) - (a.pattern ? specificity(a.pattern) : -1));
      if (!fitting.length) {
        const foreign = outer.find((o) => !(o.host !== null && target !== null && sameSite(o.host.host, target.host)))!;
        error = `The secret "${name}" may only be used on ${where}: this field is on ${show({ url: pageUrl, host: target })}, but in a frame embedded by ${show(foreign)}, another site the secret does not name. Nothing was typed.`;
        return whole;
      }
      used.push(name);
      return fitting[0].value;
    });
    return error ? { ok: false, error } : { ok: true, text: out, used };
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
    for (const m of this.masks) {
      const needle = caseless ? m.lower : m.variant;
      let from = 0;
      let at = lower.indexOf(needle, from);
      if (at < 0) continue;
      let rebuilt = '';
      let rebuiltLower = '';
      let last = 0;
      while (at >= 0) {
        const end = at + needle.length;
        if (!m.wholeWord || (!isWordChar(lower[at - 1]) && !isWordChar(lower[end]))) {
          const ph = placeholder(m.name);
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
      let j = i;
      for (; ; j++) {
        count.set(names[j]!, (count.get(names[j]!) ?? 0) + 1);
        if (!joined[j]) break;
      }
      const named = [...count].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
      out += text.slice(last, at[i]) + placeholder(named);
      last = at[j] + 1;
      i = j + 1;
    }
    return out + text.slice(last);
  }

  /** Masks every string inside a JSON-like value. */
  maskDeep<T>(value: T): T {
    if (typeof value === 'string') return this.mask(value) as T;
    if (Array.isArray(value)) return value.map((v) => this.maskDeep(v)) as T;
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.maskDeep(v)])) as T;
    return value;
  }
}

const isWordChar = (ch: string | undefined): boolean => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);

/** How a value may show up in a page, a URL or a JSON text. */
function encodings(value: string): string[] {
  const uri = encodeURIComponent(value);
  const variants = [value, uri, uri.replace(/%20/g, '+'), new URLSearchParams({ v: value }).toString().slice(2), JSON.stringify(value).slice(1, -1), escapeHtml(value)];
  // Percent escapes may be written in lower case.
  variants.push(...variants.map((v) => v.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase())));
  return [...new Set(variants.filter(Boolean))];
}

/**
 * Whether two hosts are the same site: the same address, or names with the same registrable
 * domain (approximated without the public suffix list: the last two labels, or three under a
 * two-letter country code whose second level is short, as in example.co.uk).
 */
export function sameSite(a: string, b: string): boolean {
  if (a === b) return true;
  const site = (h: string): string => {
    if (/^[\d.]+$/.test(h) || h.includes(':')) return h;
    const labels = h.split('.');
    const keep = labels.length >= 3 && labels[labels.length - 1].length === 2 && labels[labels.length - 2].length <= 3 ? 3 : 2;
    return labels.slice(-keep).join('.');
  };
  return site(a) === site(b);
}

/** The value without its whitespace (what the pieces of long values are read from). */
const compact = (s: string): string => s.replace(/\s+/g, '');

/** A long value's forms whose every piece is masked: as is, encoded for URLs, forms, JSON and HTML, and in base64. */
function longForms(value: string): string[] {
  const forms = encodings(value);
  for (const v of [value, compact(value), value.replace(/\s+/g, ' ')]) {
    const bytes = Buffer.from(v, 'utf8');
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
  for (const m of text.matchAll(PLACEHOLDER)) spans.push([m.index, m.index + m[0].length]);
  return spans;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
