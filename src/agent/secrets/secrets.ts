/**
 * A task's secrets on the worker. The model writes `<secret>name</secret>`; the value is put
 * in only when an action types it, and only on a page whose host the entry's `match`
 * covers. Everything the worker sends out (to the model, to events, to the task's result
 * and records, to logs) goes through `mask`, which puts the placeholder back wherever a
 * value shows up, also URL- or JSON-encoded and in any letter case.
 */
import type { SecretEntry } from '../../workflows/types';
import { hostMatches, parseHostPattern, specificity, urlHost, type HostPattern } from '../policy/hosts';

export type { SecretEntry };

export const SECRET_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
/** A placeholder in the model's text; names are those SECRET_NAME allows. */
const PLACEHOLDER = /<secret>\s*([^<>\s]{1,64})\s*<\/secret>/g;
/** Values shorter than this are masked only where they stand alone (not inside words or numbers). */
const WHOLE_WORD_BELOW = 4;

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
   * Puts the values into `text` for the page at `pageUrl`. An unknown name, or a secret
   * whose `match` does not cover the page, fails the whole text: nothing is typed.
   */
  substitute(text: string, pageUrl: string): Substitution {
    const used: string[] = [];
    let error: string | undefined;
    const target = urlHost(pageUrl);
    const out = text.replace(PLACEHOLDER, (whole, name: string) => {
      if (error) return whole;
      const candidates = this.entries.filter((e) => e.name === name);
      if (!candidates.length) {
        const known = this.catalogue().map((c) => c.name);
        error = `There is no secret named "${name}"${known.length ? `; the secrets are: ${known.join(', ')}` : ''}. Nothing was typed.`;
        return whole;
      }
      const fitting = candidates
        .filter((e) => e.pattern === null || (target !== null && hostMatches(e.pattern, target)))
        .sort((a, b) => (b.pattern ? specificity(b.pattern) : -1) - (a.pattern ? specificity(a.pattern) : -1));
      if (!fitting.length) {
        const where = candidates.map((e) => e.matchText).join(', ');
        error = `The secret "${name}" may only be used on ${where}, and this page is ${target ? target.host : pageUrl}. Nothing was typed.`;
        return whole;
      }
      used.push(name);
      return fitting[0].value;
    });
    return error ? { ok: false, error } : { ok: true, text: out, used };
  }

  /** `text` with every value replaced by its placeholder. */
  mask(text: string): string {
    if (!this.masks.length || !text) return text;
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

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
