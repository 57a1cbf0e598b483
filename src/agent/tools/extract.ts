import type { Page } from 'playwright-core';
import { z } from 'zod';
import type { AgentTool, ToolContext } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';
import { countItems, loadMore } from './scroll';

const schema = z.object({ query: z.string().min(1).describe("What you are looking for on the page, in the task's own words") });

/** Enough to read a page's substance; more would crowd the conversation. */
const MAX_CHARS = 4000;
const MIN_MAIN_CHARS = 200;

/** The readable text of a document: its main region when it has a substantial one. Runs in the page. */
function pageText(minMain: number): string {
  const main = document.querySelector('main, [role="main"], article');
  const body = document.body;
  const text = (el: Element | null) => (el instanceof HTMLElement ? el.innerText : (el?.textContent ?? ''));
  const mainText = text(main);
  return mainText.trim().length >= minMain ? mainText : text(body);
}

/** How many times extract scrolls an infinite list to load a number it is asked for. */
const MAX_LOAD_ROUNDS = 8;

/** The text of the page and its frames, whole (below the viewport too), in lines. */
export async function readLines(ctx: ToolContext): Promise<string[]> {
  const texts = await attempt(ctx.signal, 'Reading the page', () => abortable(readFrames(ctx.page), ctx.signal));
  return cleanLines(texts.join('\n'));
}

async function readFrames(page: Page): Promise<string[]> {
  const texts: string[] = [];
  for (const frame of page.frames()) {
    const text = await frame.evaluate(pageText, MIN_MAIN_CHARS).catch(() => '');
    if (text.trim()) texts.push(text);
  }
  return texts;
}

/** Whole lines, collapsed, without repeats of the line before. */
function cleanLines(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+/g, ' ').trim();
    if (line && line !== out[out.length - 1]) out.push(line);
  }
  return out;
}

/**
 * Keeps the page within MAX_CHARS: when it is longer, the lines sharing the most words with the
 * query win, and stay in page order so they still read as the page does.
 */
export function relevantExcerpt(lines: string[], query: string, maxChars = MAX_CHARS): { text: string; omitted: number } {
  const total = lines.reduce((sum, line) => sum + line.length + 1, 0);
  if (total <= maxChars) return { text: lines.join('\n'), omitted: 0 };
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])];
  const scored = lines.map((line, index) => {
    const lower = line.toLowerCase();
    return { index, score: words.filter((word) => lower.includes(word)).length };
  });
  const order = [...scored].sort((first, second) => second.score - first.score || first.index - second.index);
  const keep = new Set<number>();
  let size = 0;
  for (const { index } of order) {
    const line = lines[index].length > maxChars / 4 ? `${lines[index].slice(0, maxChars / 4 - 1)}…` : lines[index];
    if (size + line.length + 1 > maxChars) continue;
    keep.add(index);
    size += line.length + 1;
  }
  const kept: string[] = [];
  let last = -1;
  for (const index of [...keep].sort((first, second) => first - second)) {
    if (last >= 0 && index > last + 1) kept.push('…');
    kept.push(lines[index].length > maxChars / 4 ? `${lines[index].slice(0, maxChars / 4 - 1)}…` : lines[index]);
    last = index;
  }
  return { text: kept.join('\n'), omitted: total - size };
}

/**
 * The few lines that share the most of the query's words, when they stand out (at most
 * MAX_BEST lines share the top score, of a page longer than that): a small model read a
 * list of 30 invoices and answered with the first amount it saw, not the one asked for.
 */
export function bestLines(lines: string[], query: string): string[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])];
  if (!words.length || lines.length <= MAX_BEST) return [];
  const scores = lines.map((line) => words.filter((word) => line.toLowerCase().includes(word)).length);
  const top = Math.max(...scores);
  const best = lines.flatMap((line, index) => (scores[index] === top ? [...(bylineOf(line, query) && index > 0 ? [lines[index - 1]] : []), line] : []));
  return top > 0 && best.length <= MAX_BEST + 1 ? best.map((line) => (line.length > 300 ? `${line.slice(0, 299)}…` : line)) : [];
}

/**
 * Whether the line is the byline of a person the query names ("★★☆☆☆ 2 out of 5 · by Helga
 * K."): what they wrote is the line above. The default model, given the byline alone as the
 * best match for "Helga K.'s complaint", answered with her rating.
 */
function bylineOf(line: string, query: string): boolean {
  return (query.match(PERSON) ?? []).some((name) => line.toLowerCase().includes(`by ${name.replace(/\.$/, '').toLowerCase()}`));
}
const MAX_BEST = 3;

/**
 * The numbers of the query (an invoice's "#1025", an order's "40213") that the page's text
 * does not hold: a small model asked for invoice #1025 of a list that had loaded #1001 to
 * #1020, and answered with #1002's amount.
 */
export function missingNumbers(text: string, query: string): string[] {
  const wanted = [...new Set(query.match(/#?\d{3,}/g) ?? [])];
  const digits = new Set(text.match(/\d{3,}/g) ?? []);
  return wanted.filter((mark) => !digits.has(mark.replace(/^#/, '')));
}

/** A person as a list names them ("Helga K.", "Tom W") or a handle ("marco_p", "@lena"). */
const PERSON = /\b[A-Z][\p{Ll}]+ [A-Z]\.?(?![\p{L}])|@[\w.]{2,}|\b[a-z]+_[\w]+\b/gu;

/**
 * The people of the query (a reviewer "Helga K.", a user "marco_p") that the page's text does
 * not hold: a review list loaded by scrolling holds them further down. The default model
 * answered "Helga K.'s complaint" with the task's own words, her review not loaded yet.
 */
export function missingPeople(text: string, query: string): string[] {
  const lower = text.toLowerCase();
  return [...new Set(query.match(PERSON) ?? [])].map((name) => name.replace(/\.$/, '')).filter((name) => !lower.includes(name.toLowerCase()));
}

/** The numbers and people of the query that the text does not hold. */
const missingMarks = (text: string, query: string) => [...missingNumbers(text, query), ...missingPeople(text, query)];

export const extractTool: AgentTool<typeof schema, 'extract'> = {
  name: 'extract',
  description: 'Read the text of the whole page (not only the visible part) to find information; say what you are looking for in query.',
  schema,
  async execute(ctx, { query }) {
    let lines = await readLines(ctx);
    // A number asked for that the page does not hold yet, on a page with lists: an infinite
    // list may hold it further down. A small model read the first 10 invoices of one, asked
    // for #1025, and answered with #1002's amount.
    let loaded = 0;
    let toEnd = false;
    const items = missingMarks(lines.join('\n'), query).length ? await countItems(ctx) : 0;
    if (items > 0) {
      const from = await abortable(ctx.page.evaluate(() => window.scrollY), ctx.signal);
      for (let round = 0; round < MAX_LOAD_ROUNDS && missingMarks(lines.join('\n'), query).length; round++) {
        const added = await loadMore(ctx, round === 0 ? items : undefined);
        toEnd = !added;
        if (!added) break;
        loaded += added;
        lines = await readLines(ctx);
      }
      // Nothing loaded: the page left where the agent had it.
      if (!loaded) await abortable(ctx.page.evaluate((top) => window.scrollTo({ top, behavior: 'instant' }), from), ctx.signal);
    }
    const scrolled = loaded ? `(Scrolled down to load more: ${loaded} more item${loaded === 1 ? '' : 's'} loaded.)\n` : '';
    const { text, omitted } = relevantExcerpt(lines, query);
    const more = omitted > 0 ? `\n(${omitted} characters of less relevant text left out)` : '';
    const best = bestLines(lines, query);
    const missing = missingMarks(lines.join('\n'), query).map((mark) => `"${mark}"`);
    const absent = missing.length
      ? `${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} nowhere in this page's text${toEnd ? ", its lists scrolled to their end: it may be on another page" : ': not loaded yet (scroll to load more) or on another page'}. Answer only with what the text holds.\n`
      : '';
    const first = best.length ? `Best match${best.length > 1 ? 'es' : ''} for "${query}":\n${best.join('\n')}\nThe whole text:\n` : '';
    return { summary: `Text of ${ctx.page.url()} for "${query}":\n${scrolled}${absent}${first}${text || '(the page has no text)'}${more}`, target: ctx.page.url() };
  },
  // What it looks for.
  async policyFacts({ args }) {
    return { texts: [String(args.query ?? '')] };
  },
  recording: { index: 'none' },
  playwright: () => ['// The agent read the page here.'],
};
