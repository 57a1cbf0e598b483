/**
 * Text that the last actions made appear and that holds what a question asks about (a word
 * of the task, and a figure): named to the model as a possible answer. The default model
 * pressed "Show phone number", the page showed "Phone: 06 4817 2093", and with no thought to
 * weigh it pressed the site's home link, then the button again, for 20 steps.
 */
import { wordsOf } from './index-check';
import { ASKS } from './observe/named-in-view';
import { readObservation } from './observe/page-diff';

const MAX_LINES = 2;
const MAX_QUOTED = 160;

/** The note, or undefined when the task asks nothing or no line that appeared fits. */
export function revealedAnswerNote(task: string, before: string, now: string): string | undefined {
  if (!ASKS.test(task) && !task.includes('?')) return undefined;
  const taskWords = new Set(wordsOf(task));
  const earlier = new Set(readObservation(before).text);
  const appeared = readObservation(now).text.filter((line) => !earlier.has(line) && /\d/.test(line) && wordsOf(line).some((w) => taskWords.has(w)));
  if (!appeared.length || appeared.length > MAX_LINES) return undefined;
  const quoted = appeared.map((line) => `"${line.length > MAX_QUOTED ? `${line.slice(0, MAX_QUOTED - 1)}…` : line}"`).join(' and ');
  return `Note: your last action made the page show ${quoted}. If that answers the task, call done with it.`;
}
