/**
 * For a task that asks for information about something it names ("the price of the Oak
 * Rocking Chair"), the lines of the page that name it, said after the page. A small model on
 * the second page of search results, the line "Oak Rocking Chair: $149" in view, pressed
 * "Previous page" and went back and forth until its steps ran out.
 */
import { askedKinds, figuresOf, type FigureKind } from '../stated-answer';
import { otherWeekday } from '../task-values';

/** The task asks to be told something (not only to do something). */
export const ASKS = /\b(?:tell me|what(?:'s| is| are| was| were| does| do)|which|how (?:much|many|long)|find (?:out|the)|look up|read|report|give me|answer with|check (?:the|what|whether|if|how)|get (?:me )?the)\b/i;
/** A quoted text of the task (one after "for", "type" or "enter" is what to search or type, not a name). */
const QUOTED = /"([^"\n]{3,60})"|“([^”\n]{3,60})”/g;
const TYPED_BEFORE = /\b(?:for|type|enter|search)\s*$/i;
/** An identifier of letters and digits (order A-1042, invoice INV-2031), or a number after # (order #4471). */
const IDENTIFIER = /\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{3,}\b|#\d{2,}\b/g;
/** Two or more capitalised words in a row (small joining words allowed between them): Oak Rocking Chair, Bank of Lyon. */
const NAMED = /\b[A-Z][\w'-]*(?:\s+(?:(?:of|and|the|de|du|&)\s+)?[A-Z0-9][\w'-]*)+/g;
/** Lines of the observation that are not the page's text (address, title, tabs, section headings, notes, elements). */
const FRAME_LINE = /^(?:The rest of the page's text \(below the viewport\)|URL|Title|Tabs|Scroll|Interactive elements|Visible text|Above the viewport|Below the viewport|Left or right of the viewport):|^\(|^\.\.\. |^\[\d+\]|^A modal dialog/;
/** At most this many characters of a line are quoted, and this many lines. */
const MAX_QUOTED = 120;
const MAX_LINES = 2;
/** The line after a name alone is quoted with it when it is this short (a price, a status). */
const MAX_FOLLOWING = 40;
/** A line of column names quoted above a keyword's line is at most this long. */
const MAX_HEADING = 60;
/** …and at most this many lines above it. */
const HEADING_WITHIN = 8;

/** A capitalised word inside a sentence (not its first): Gold (plan), Oslo, Dune. */
const CAPITALISED = /(?<![.!?:]\s*|^\s*)(?<![\p{L}\p{N}'-])\p{Lu}\p{Ll}{2,}(?![\p{L}\p{N}'-])/gu;

/** What the task names that a page may show a line about: its quoted texts and its names of several capitalised words. */
export function namesAsked(task: string): string[] {
  return ASKS.test(task) ? namesIn(task) : [];
}

/** The task's quoted texts (not what it types or searches), names of several capitalised words and identifiers. */
function namesIn(task: string): string[] {
  const names = new Set<string>();
  for (const m of task.matchAll(QUOTED)) {
    const text = (m[1] ?? m[2]).trim();
    if (!TYPED_BEFORE.test(task.slice(0, m.index)) && (/\s/.test(text) || /[A-Z0-9]/.test(text))) names.add(text);
  }
  // (capitalised words inside quotes are the quoted text's, kept or left above)
  const unquoted = task.replace(QUOTED, (q) => ' '.repeat(q.length));
  for (const m of unquoted.matchAll(NAMED)) {
    const words = m[0].trim().split(/\s+/);
    names.add(words.join(' '));
    // "Which Open Water Swim…": at a sentence's start, the name may begin after its first word
    if (words.length > 2 && /(?:^|[.!?:]\s+)$/.test(unquoted.slice(0, m.index))) names.add(words.slice(1).join(' '));
  }
  for (const m of unquoted.matchAll(IDENTIFIER)) names.add(m[0]);
  return [...names].filter((name) => name.length >= 3);
}

/** Words of a question too common to pick out a line (what is asked, how it is said). */
const COMMON = new Set(
  'about above after again along among another answer around because before below between called cheapest could every first found general highest latest looks lowest newest number other page pages phone please price prices right second shows sells selling should their there these thing things third those today tomorrow under until website where which while would tell what when does take takes long many much find check look give want need online account login password email address order orders person people current currently'.split(' '),
);

/** The task's rarer words (five letters or more, not common in questions), each without a plural s. */
export function keywordsAsked(task: string): string[] {
  if (!ASKS.test(task) && !/\?|\b(?:who|when|where|how|what)\b/i.test(task)) return [];
  const words = (task.toLowerCase().match(/\p{L}{5,}/gu) ?? []).map((w) => w.replace(/(?<=[^s])s$/, '')).filter((w) => !COMMON.has(w) && !COMMON.has(`${w}s`));
  // "check in" is no common "check": the page's "Check-in" (the default model, the stay's
  // "Check-in | from 16:30" in view, pressed "Reserve")
  const checks = [...task.toLowerCase().matchAll(/\bcheck[- ]?(in|out)\b/g)].map((m) => `check-${m[1]}`);
  return [...new Set([...checks, ...words])];
}

/** Lines of the page text that hold `word` as a word (or its plural): at most two, or none for a word on more lines. */
function linesWith(word: string, lines: string[]): string[] {
  const re = new RegExp(`(?<!\\p{L})${word}(?:s|es)?(?!\\p{L})`, 'iu');
  const found = lines.filter((line) => re.test(line));
  return found.length <= MAX_LINES ? found.filter((line) => line.length > word.length + 2) : [];
}

/** The line names `name` as the one who wrote what it follows: "… · by Helga K.", "Posted by Lena M.". */
const byline = (line: string, name: string) => new RegExp(`\\bby\\s+${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'i').test(line);

const clipped = (line: string) => `"${line.length > MAX_QUOTED ? `${line.slice(0, MAX_QUOTED - 1)}…` : line}"`;

/**
 * The note for the observation, or undefined when the task asks nothing about a name or no
 * line of the page's text holds one with more than the name (a line of the name alone is
 * quoted with the line after it: a card's title, then its price).
 */
export function namedInViewNote(task: string, observation: string): string | undefined {
  const seen = inView(task, observation);
  return seen && `Note: the task asks about ${seen.about}; this page shows ${seen.shown}. If that answers the task, call done with it.`;
}

/**
 * The same for the text an extract read (lines below the viewport, loaded by scrolling): the
 * default model, its extract's best match "Invoice #1025: €512.40", answered with the amount
 * of the line of #1015 in view.
 */
export function namedInExtractNote(task: string, extracted: string): string | undefined {
  // the page's lines only: not the heading that repeats the query, nor what the tool says of them
  const text = extracted
    .split('\n')
    .slice(1)
    .filter((line) => !/^(?:Best match(?:es)? for |The whole text:|\(Scrolled down|\(\d+ characters of less relevant)/.test(line) && !/ nowhere in this page's text/.test(line));
  const seen = inView(task, `Visible text:\n${text.join('\n')}`);
  if (seen) return `Note: the task asks about ${seen.about}; the text your extract read shows ${seen.shown}. If that answers the task, call done with it.`;
  const best = bestWithFigure(task, extracted);
  return best && `Note: your extract's best match is ${best}. If that answers the task, call done with it.`;
}

/**
 * The extract's best matches that hold a figure (at most two), quoted, for a task that asks
 * and whose names the text holds (none left to find); undefined otherwise. The default model,
 * asked how heavy a camera is with its battery, had "Weight (with battery and card) 468 g" as
 * its extract's best match twice, and wrote that the battery was not mentioned.
 */
function bestWithFigure(task: string, extracted: string): string | undefined {
  if (!ASKS.test(task) && !/\?/.test(task)) return undefined;
  const lines = extracted.split('\n');
  const from = lines.findIndex((line) => /^Best match(?:es)? for /.test(line));
  const to = lines.indexOf('The whole text:');
  if (from < 0 || to < from) return undefined;
  const whole = lines.slice(to + 1).join('\n').toLowerCase();
  if (!namesIn(task).every((name) => whole.includes(name.toLowerCase()))) return undefined;
  const best = lines.slice(from + 1, to).filter((line) => /\d/.test(line) && !otherWeekday(task, line));
  return best.length && best.length <= MAX_LINES ? best.map(clipped).join(', and ') : undefined;
}

/** The page's lines the task asks about, quoted (`"Jonas Berg Payroll 2615"`), or undefined: what the note says the page shows. */
export function shownInView(task: string, observation: string): string | undefined {
  return inView(task, observation)?.shown;
}

/** What the task asks about and the lines of the page that show it, quoted. */
function inView(task: string, observation: string): { about: string; shown: string } | undefined {
  const names = namesAsked(task);
  const lines = observation.split('\n').map((line) => line.trim());
  const start = lines.indexOf('Visible text:');
  if (start < 0) return undefined;
  // the site's own words (its title, its address) pick out nothing
  const site = `${/^Title: (.*)$/m.exec(observation)?.[1] ?? ''} ${/^URL: (.*)$/m.exec(observation)?.[1] ?? ''}`.toLowerCase();
  const keywords = () => keywordsInView(task, site, lines.slice(start + 1).filter((line) => line && !FRAME_LINE.test(line) && !/^(?:Note|Changed|Your task):/.test(line)));
  if (!names.length) return keywords() ?? capitalisedInView(task, site, lines.slice(start + 1).filter((line) => line && !FRAME_LINE.test(line) && !/^(?:Note|Changed|Your task):/.test(line)));
  const found: { name: string; quoted: string }[] = [];
  // a question of a figure (a date, a price) is answered by a line with one: "New this month:
  // "The Hobbit" illustrated edition" was quoted for when the book is due, and the default
  // model was held on it from signing in
  // a question of a quantity or a number is answered by a line with a figure besides the name:
  // "Orca S5 wireless headphones" was quoted for how long the Orca S5's battery lasts, and held
  // the default model from opening the specifications
  const answers = (text: string, name = '') => {
    if (strictKinds(task).length) return figuresOf(text, strictKinds(task)).length > 0;
    return !askedKinds(task).length || /\d/.test(text.toLowerCase().split(name.toLowerCase()).join(' '));
  };
  for (let i = start + 1; i < lines.length && found.length < MAX_LINES; i++) {
    const line = lines[i];
    if (!line || FRAME_LINE.test(line)) continue;
    const name = names.find((n) => line.toLowerCase().includes(n.toLowerCase()));
    if (!name || found.some((f) => f.quoted.startsWith(clipped(line))) || otherWeekday(task, line)) continue;
    if (line.length > name.length + 2) {
      if (!answers(line, name)) continue;
      const record = tableRecord(lines, line);
      // a byline ("★★☆☆☆ 2 out of 5 · by Helga K."): what the person wrote is the line above
      // (the default model, quoted the byline alone, answered with its rating)
      const above = byline(line, name) ? lines[i - 1] : undefined;
      const wrote = above && !FRAME_LINE.test(above) && i - 1 > start ? `${clipped(above)} above ` : '';
      found.push({ name, quoted: `${wrote}${clipped(line)}${record ? ` (${record})` : ''}` });
      continue;
    }
    // a card's title then its price; not a heading then its paragraph (the site's name above
    // its opening words made the default model press a link again and again)
    const next = lines[i + 1];
    if (next && next.length <= MAX_FOLLOWING && !FRAME_LINE.test(next) && !names.some((n) => next.toLowerCase().includes(n.toLowerCase())) && answers(next)) found.push({ name, quoted: `${clipped(line)} then ${clipped(next)}` });
  }
  // a task that names only the site it is on ("a large sourdough at Crumb & Co", on Crumb &
  // Co's page): its other words pick out the line (the default model, the price list in view,
  // pressed the page's own links for 9 steps)
  if (!found.length) return names.every((n) => site.includes(n.toLowerCase())) ? keywords() : undefined;
  const named = [...new Set(found.map((f) => `"${f.name}"`))].join(' and ');
  return { about: named, shown: found.map((f) => f.quoted).join(', and ') };
}

/** The kinds of figure a question asks that a line must show to answer it: a date, a time, an amount (a number or quantity may be written any way). */
function strictKinds(task: string): FigureKind[] {
  const kinds = askedKinds(task);
  return kinds.some((kind) => kind === 'number' || kind === 'quantity') ? [] : kinds;
}

/** A line that may answer the question: one with a figure of the kind it asks, or with any figure. */
function withFigure(task: string, line: string): boolean {
  const kinds = strictKinds(task);
  return kinds.length ? figuresOf(line, kinds).length > 0 : /\d/.test(line);
}

/** The word a page names a measure by, for the question that asks it ("how heavy": weight). */
const MEASURES: [RegExp, string][] = [
  [/\bhow heavy\b/i, 'weight'],
  [/\bhow (?:big|large)\b/i, 'size'],
  [/\bhow long\b/i, 'length'],
  [/\bhow far\b/i, 'distance'],
  [/\bhow tall|\bhow high\b/i, 'height'],
  [/\bhow wide\b/i, 'width'],
  [/\bhow old\b/i, 'age'],
];

/** The measures a question asks by their page words ("How heavy is it?": weight). */
export function measuresAsked(task: string): string[] {
  return MEASURES.filter(([asked]) => asked.test(task)).map(([, word]) => word);
}

/**
 * The one or two lines with a figure that hold the most of the question's words, two at least
 * (the others holding fewer): "How heavy is the Fennec X2 once the battery is in?": "Weight
 * (with battery and card) | 468 g", not "Weight (body only) | 412 g". The default model, both
 * lines on the page, answered with the body's weight.
 */
function mostWords(task: string, words: string[], lines: string[]): { about: string; shown: string } | undefined {
  const scored = [...new Set(lines)]
    .filter((line) => withFigure(task, line) && !otherWeekday(task, line))
    .map((line) => ({ line, held: words.filter((word) => linesWith(word, [line]).length) }));
  const top = Math.max(0, ...scored.map((s) => s.held.length));
  const best = scored.filter((s) => s.held.length === top);
  if (top < 2 || best.length > MAX_LINES) return undefined;
  return { about: best[0].held.map((word) => `"${word}"`).join(' and '), shown: best.map((s) => clipped(s.line)).join(', and ') };
}

/**
 * For a question that names no name, the lines of the page that hold one of its rarer words
 * and a figure, when one or two lines hold the word ("Who looks after payroll?": "Jonas Berg
 * Payroll 2615"). The
 * default model, that line in view, answered with the line above it.
 */
function keywordsInView(task: string, site: string, lines: string[]): { about: string; shown: string } | undefined {
  // only lines with a figure: what such a question asks is most often one, and a line of
  // words alone ("Categories: Kitchen | Garden | Office") was taken by the default model for
  // an answer it could not give, and it gave up
  const words = [...keywordsAsked(task), ...measuresAsked(task)].filter((word) => !site.includes(word));
  const most = mostWords(task, words, lines);
  if (most) return most;
  // (not a line of another day of the week than the task's)
  const hit = words.map((word) => ({ word, found: linesWith(word, lines).filter((line) => withFigure(task, line) && !otherWeekday(task, line)) })).find((h) => h.found.length);
  if (!hit) return undefined;
  // a table's heading row that holds another word of the question, above the line ("a large
  // sourdough": "Bread Small Large" above "Sourdough €3.20 €5.40"): which column is which
  const first = lines.indexOf(hit.found[0]);
  const above = lines.slice(Math.max(0, first - HEADING_WITHIN), first);
  const heading = words
    .filter((word) => word !== hit.word)
    .flatMap((word) => linesWith(word, above).map((line) => ({ word, line })))
    .filter(({ line }) => !/\d/.test(line) && line.length <= MAX_HEADING)
    .sort((a, b) => above.lastIndexOf(b.line) - above.lastIndexOf(a.line))[0];
  const shown = hit.found.map(clipped).join(', and ');
  if (!heading) {
    const row = tableRecord(lines, hit.found[0]);
    return { about: `"${hit.word}"`, shown: row ? `${shown} (${row})` : shown };
  }
  const record = recordOf(heading.line, hit.found[0]);
  return { about: `"${hit.word}"`, shown: `${clipped(heading.line)} above ${shown}${record ? ` (${record})` : ''}` };
}

/**
 * Words that name nothing, capitalised as a title's first word ("take The Hobbit back"): "The"
 * picked out "The Hillside branch is closed on 24 and 26 December." for when a book is due,
 * and the default model took it for the answer instead of signing in.
 */
const FUNCTION_WORD = /^(?:the|and|for|nor|but|yet|with|from|into|onto|your|our|their|this|that|these|those|its|his|her|who|what|when|where|which|how|why|are|was|were|has|have|had|can|will|may|not|all|any|some|one|out|off|over|about|after|before|than|then)$/i;

/**
 * For a question of a figure about a name of one capitalised word ("the monthly price of the
 * Gold plan"), the one or two lines of the page that hold the word and a figure of the kind
 * asked ("Gold plan: $42 per month", not "Gold plan members save 24%"). The default model, that
 * line in view, switched between the tabs until its steps ran out.
 */
function capitalisedInView(task: string, site: string, lines: string[]): { about: string; shown: string } | undefined {
  const kinds = askedKinds(task);
  if (!kinds.length) return undefined;
  const words = [...new Set([...task.matchAll(CAPITALISED)].map((m) => m[0]))].filter((word) => !site.includes(word.toLowerCase()) && !FUNCTION_WORD.test(word));
  for (const word of words) {
    const found = linesWith(word.toLowerCase(), lines).filter((line) => figuresOf(line, kinds).length && !otherWeekday(task, line));
    if (found.length) return { about: `"${word}"`, shown: found.map(clipped).join(', and ') };
  }
  return undefined;
}

/**
 * A table's row read by its heading row ("Bread Small Large" over "Sourdough €3.20 €5.40":
 * `Bread: Sourdough, Small: €3.20, Large: €5.40`), the row read from the right (only its first
 * cell may take several words: "Jonas Berg Payroll 2615"); undefined for a heading of fewer
 * than three names or a row of fewer words. The default model, the heading row and the line
 * quoted, still wrote it had to find the price of the large one.
 */
export function recordOf(heading: string, row: string): string | undefined {
  if (heading.includes(' | ') && row.includes(' | ')) return cellsRecord(heading, row);
  const names = heading.split(/\s+/);
  const cells = row.split(/\s+/);
  if (names.length < 3 || cells.length < names.length) return undefined;
  const extra = cells.length - names.length;
  return names.map((name, i) => `${name}: ${i === 0 ? cells.slice(0, extra + 1).join(' ') : cells[i + extra]}`).join(', ');
}

const CELLS = /\s*\|\s*/;

/** A table row read by its heading row, cell by cell (`Title: The Hobbit, Due back: 14 December 2026`); cells past the heading's are left out. */
function cellsRecord(heading: string, row: string): string | undefined {
  const names = heading.split(CELLS);
  const cells = row.split(CELLS);
  if (names.length < 2 || cells.length < names.length) return undefined;
  const pairs = names.map((name, i) => [name, cells[i]]).filter(([name, cell]) => name && cell);
  return pairs.length >= 2 ? pairs.map(([name, cell]) => `${name}: ${cell}`).join(', ') : undefined;
}

/**
 * The heading row of the table row `row` (the nearest line above it, within a few, of as
 * many cells or one fewer and no figure), read into the row; undefined for a line that is no
 * table row or a table without a heading row.
 */
export function tableRecord(lines: readonly string[], row: string): string | undefined {
  if (!row.includes(' | ')) return undefined;
  const at = lines.lastIndexOf(row);
  const count = row.split(CELLS).length;
  for (let i = at - 1; i >= Math.max(0, at - HEADING_WITHIN); i--) {
    const cells = lines[i].split(CELLS).length;
    if (lines[i].includes(' | ') && !/\d/.test(lines[i]) && (cells === count || cells === count - 1)) return cellsRecord(lines[i], row);
  }
  return undefined;
}
