/**
 * The values a task gives to be typed (an e-mail address, a phone or card number, a quoted
 * text), so that what the agent is told about an empty field can name them, and a done can be
 * held once against a value never typed while the page still shows an empty field. The default
 * model read "ask for a callback to the phone number 555-0100", closed the cookie dialog and
 * called the task done with the "Phone number" field of the page empty.
 */

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
/** Seven to fifteen digits (a phone number's lengths), with spaces, dashes, dots or brackets between them: 555-0100, +44 20 7946 0958. */
const PHONE = /\+?\(?\d[\d ().-]{5,}\d/g;
/** A date in digits is typed in the page's own format, so it is left to the form checks. */
const DATE = /^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$/;
/** A quoted text: "…", “…”, or '…' between spaces and punctuation (never an apostrophe). */
const QUOTED = /"([^"\n]{1,80})"|“([^”\n]{1,80})”|(?:^|[\s(:])'([^'\n]{1,80})'(?=[\s.,;:!?)]|$)/g;
/** Words after a quoted text that make it the name of a part of the page. */
const NAMES_AFTER = /^\s*(?:field|box|text ?box|input|button|link|tab|menu|page|section|option|column|checkbox|check box|dropdown|drop-down|list|label|heading|form|dialog|area|panel)s?\b/i;
/** A password the task gives after the word: "password Peach-Tree-77", "my password is: hunter2", 'password "open sesame"'. */
const PASSWORD = /\b(?:password|passcode|pin)(?:\s+is)?\s*:?\s+(?:"([^"\n]{1,80})"|“([^”\n]{1,80})”|([^\s"“”']+?)(?=[,;)]|\.?(?:\s|$)))/i;
/** At most this many values are named. */
const MAX_VALUES = 3;

const squeeze = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();
const digitsOf = (text: string) => text.replace(/\D/g, '');

/** The values the task's prompt gives, in the order given (secrets' placeholders aside). */
export function givenValues(prompt: string): string[] {
  const values: string[] = [];
  const add = (value: string) => {
    const v = value.trim();
    if (v && !/<\/?secret>/i.test(v) && !values.some((known) => squeeze(known) === squeeze(v))) values.push(v);
  };
  for (const m of prompt.matchAll(QUOTED)) {
    // "Full name" field, the "Submit" button: the name of something on the page, not a value
    if (NAMES_AFTER.test(prompt.slice((m.index ?? 0) + m[0].length))) continue;
    add(m[1] ?? m[2] ?? m[3] ?? '');
  }
  for (const m of prompt.matchAll(EMAIL)) add(m[0]);
  const password = taskPassword(prompt);
  if (password) add(password);
  for (const m of prompt.matchAll(PHONE)) {
    const number = m[0].replace(/[ .-]+$/, '');
    const digits = digitsOf(number).length;
    if (digits >= 7 && digits <= 15 && !DATE.test(number)) add(number);
  }
  return values;
}

/**
 * The password the task gives in its words (not a secret's placeholder: those are typed as
 * they are). The default model, given "Log in with sam@example.com, password Peach-Tree-77",
 * typed the address and never the password.
 */
export function taskPassword(prompt: string): string | undefined {
  const m = PASSWORD.exec(prompt);
  const quoted = m?.[1] ?? m?.[2];
  // a word unquoted is a password only with a digit, a capital or a sign in it ("into", "for me" are not)
  const found = quoted ?? (m?.[3] && /[^a-z]/.test(m[3]) ? m[3] : undefined);
  return found && !/<\/?secret>/i.test(found) ? found : undefined;
}

/** Whether `value` is in `text`: as words, or for a number by its digits. */
export function holds(text: string, value: string): boolean {
  if (squeeze(text).includes(squeeze(value))) return true;
  const digits = digitsOf(value);
  return digits.length >= 7 && digits === value.replace(/[\s().+-]/g, '') && digitsOf(text).includes(digits);
}

/** The values the task gives that were neither typed (or chosen) nor are on the page as the observation shows it. */
export function untypedValues(prompt: string, typed: readonly string[], page: string): string[] {
  return givenValues(prompt)
    .filter((value) => !typed.some((text) => holds(text, value)) && !holds(page, value))
    .slice(0, MAX_VALUES);
}

/** The values named for a field to fill: ` ("555-0100")`, or '' when none. */
export function valuesNamed(values: readonly string[]): string {
  return values.length ? `: ${values.map((value) => `"${value}"`).join(', ')}` : '';
}

/** An observation's empty text fields: `[3] textbox "Phone number" type=tel empty` gives { index: 3, label: 'Phone number' }. */
export function emptyTextFields(observation: string): { index: number; label: string }[] {
  const out: { index: number; label: string }[] = [];
  for (const m of observation.matchAll(/^\s*\[(\d+)\] (?:textbox|searchbox|combobox) "((?:[^"\\]|\\.)*)"(.*)$/gm)) {
    if (/\bempty\b/.test(m[3]) && !/\bdisabled\b|\breadonly\b/.test(m[3])) out.push({ index: Number(m[1]), label: m[2] });
  }
  return out;
}


/** Words of a task that looks something up. */
const LOOKS_UP = /\b(?:search|find|look (?:up|for)|cheapest|lowest|sells?|buy|order|price of)\b/i;
/** A capitalised word or run of them (small joining words between): Dune, The Left Hand of Darkness, Porto. */
const CAPITALISED = /\b[A-Z][\w'’-]*(?:\s+(?:(?:of|and|the|de|du|la|&)\s+)?[A-Z0-9][\w'’-]*)*/g;
/** Words capitalised for a reason other than being a name. */
const NOT_NAMES = new Set(
  ['I', "I'm", 'I’m', "I'd", 'I’d', 'Please', 'My', 'The', 'A', 'An'].concat(
    'Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August September October November December'.split(' '),
  ),
);

/**
 * What a search field may take from a task that gives no value to type: its quoted texts, or
 * else the names it gives (capitalised words not opening a sentence), less those of the site
 * itself (in the page's title or address). The default model, asked for "the cheapest copy of
 * Dune on Bookbarn", pressed "Find books" with the search field empty, and was told only to
 * fill it "with what the task gives".
 */
export function searchTerms(prompt: string, observation: string): string[] {
  // only for a task that looks something up (a help search beside a callback form is not its)
  if (!LOOKS_UP.test(prompt)) return [];
  // (an e-mail address, a phone number or a password is for another field)
  const quoted = givenValues(prompt).filter((v) => !v.includes('@') && digitsOf(v).length < 7 && v !== taskPassword(prompt));
  if (quoted.length) return quoted.slice(0, 1);
  const site = squeeze(`${/^Title: (.*)$/m.exec(observation)?.[1] ?? ''} ${/^URL: (.*)$/m.exec(observation)?.[1] ?? ''}`);
  const names: string[] = [];
  for (const m of prompt.matchAll(CAPITALISED)) {
    const before = prompt.slice(0, m.index);
    const words = m[0].split(/\s+/);
    // a sentence's first word is capitalised anyway: the name, if any, begins after it
    const name = (/(?:^|[.!?:]\s+)$/.test(before) ? words.slice(1) : words).join(' ').trim();
    if (!name || NOT_NAMES.has(name) || site.includes(squeeze(name)) || name === taskPassword(prompt)) continue;
    names.push(name);
  }
  return names.slice(0, 1);
}

/** A day of the week, by its full name (Sunday, Sundays). */
const WEEKDAY = /\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b/gi;

/**
 * Whether `line` names days of the week, none of them one the task names, while the task names
 * one: "Knit and natter, Thursdays 14:00 (Riverside)" for the Riverside library's Sunday hours.
 * The default model was told that line answered, and answered with its 14:00.
 */
export function otherWeekday(task: string, line: string): boolean {
  const asked = [...task.matchAll(WEEKDAY)].map((m) => m[1].toLowerCase());
  const named = [...line.matchAll(WEEKDAY)].map((m) => m[1].toLowerCase());
  return asked.length > 0 && named.length > 0 && !named.some((day) => asked.includes(day));
}
