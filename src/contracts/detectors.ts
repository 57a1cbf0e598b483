/**
 * Sensitive data in what the agent would type or submit. Every pattern, built-in or the
 * user's, runs on RE2 (re2js): matching time is linear in the text, so a user's pattern
 * cannot stall a worker. Candidates are then checked (Luhn for cards, mod 97 for IBANs).
 */
import { RE2JS } from 're2js';

export const BUILT_IN_DETECTORS = ['card_number', 'iban', 'email', 'phone', 'api_key'] as const;
export type BuiltInDetector = (typeof BUILT_IN_DETECTORS)[number];

/** What the detectors are told to look for: a built-in name or a named pattern of the user's. */
export type SensitiveDataSpec = BuiltInDetector | { name: string; pattern: string };

export const MAX_CUSTOM_PATTERN = 500;
/** Longer texts are checked on their first characters only (nothing a form field holds is longer). */
export const MAX_SCANNED_CHARS = 20_000;

export interface Detector {
  name: string;
  /** What a message calls it: "a card number". */
  label: string;
  find(text: string): boolean;
}

const DESCRIPTIONS: Record<BuiltInDetector, string> = {
  card_number: 'a card number',
  iban: 'an IBAN',
  email: 'an e-mail address',
  phone: 'a phone number',
  api_key: 'an API key',
};

function candidates(re: RE2JS, text: string): string[] {
  const out: string[] = [];
  const m = re.matcher(text.slice(0, MAX_SCANNED_CHARS));
  while (m.find() && out.length < 200) out.push(m.group() ?? '');
  return out;
}

export function luhnValid(digits: string): boolean {
  if (!/^\d{13,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

export function ibanValid(raw: string): boolean {
  const iban = raw.replace(/[\s-]/g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const v = ch >= 'A' ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of v) rest = (rest * 10 + Number(digit)) % 97;
  }
  return rest === 1;
}

const CARD = RE2JS.compile('\\b\\d(?:[ -]?\\d){12,18}\\b');
const IBAN = RE2JS.compile('(?i)\\b[a-z]{2}\\d{2}(?:[ -]?[a-z0-9]){11,34}\\b');
const EMAIL = RE2JS.compile('(?i)\\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\\.[a-z0-9-]+)*\\.[a-z]{2,}\\b');
const PHONE = RE2JS.compile('(?:\\+|\\b)\\d[\\d ().-]{6,22}\\d\\b');
const API_KEY = RE2JS.compile(
  [
    'sk-(?:proj-|live-|test-)?[A-Za-z0-9_-]{20,}',
    '[sr]k_(?:live|test)_[A-Za-z0-9]{16,}',
    'AKIA[0-9A-Z]{16}',
    'gh[pousr]_[A-Za-z0-9]{30,}',
    'github_pat_[A-Za-z0-9_]{30,}',
    'xox[abposr]-[A-Za-z0-9-]{10,}',
    'AIza[0-9A-Za-z_-]{35}',
    'eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}',
    // A long unbroken token of letters and digits (generic keys and secrets).
    '\\b[A-Za-z0-9_-]{32,}\\b',
  ].join('|'),
);

const builtIns: Record<BuiltInDetector, (text: string) => boolean> = {
  card_number: (text) => candidates(CARD, text).some((c) => luhnValid(c.replace(/[ -]/g, ''))),
  // The pattern may run on into the next word: any prefix of a candidate may be the IBAN.
  iban: (text) =>
    candidates(IBAN, text).some((c) => {
      const compact = c.replace(/[\s-]/g, '');
      for (let n = Math.min(34, compact.length); n >= 15; n--) if (ibanValid(compact.slice(0, n))) return true;
      return false;
    }),
  email: (text) => EMAIL.matcher(text.slice(0, MAX_SCANNED_CHARS)).find(),
  phone: (text) =>
    candidates(PHONE, text).some((c) => {
      const digits = c.replace(/\D/g, '').length;
      // Dates and short numbers are not phone numbers; 16+ digits are cards or ids.
      return digits >= 9 && digits <= 15 && !/^\d{4}-\d{2}-\d{2}/.test(c.trim());
    }),
  api_key: (text) => candidates(API_KEY, text).some((c) => c.length >= 32 ? /\d/.test(c) && /[A-Za-z]/.test(c) : true),
};

export const isBuiltInDetector = (name: string): name is BuiltInDetector => (BUILT_IN_DETECTORS as readonly string[]).includes(name);

/** Why a custom pattern cannot be used, or null. */
export function customPatternProblem(pattern: string): string | null {
  if (!pattern) return 'must not be empty';
  if (pattern.length > MAX_CUSTOM_PATTERN) return `must be at most ${MAX_CUSTOM_PATTERN} characters`;
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (err) {
    // RE2 syntax: no backreferences or lookaround.
    return `is not a valid RE2 regular expression: ${err instanceof Error ? err.message : String(err)}`;
  }
}

export function compileDetector(spec: SensitiveDataSpec): Detector {
  if (typeof spec === 'string') return { name: spec, label: DESCRIPTIONS[spec], find: builtIns[spec] };
  const re = RE2JS.compile(spec.pattern);
  return { name: spec.name, label: `data matching "${spec.name}"`, find: (text) => re.matcher(text.slice(0, MAX_SCANNED_CHARS)).find() };
}
