/**
 * For a task that names one date ("on Friday 18 December"), on a page whose buttons are days
 * (a week strip, a calendar): the element of that day when the page shows it, else the button
 * that shows later (or earlier) days, said after the page. The default model, asked for 18
 * December on a strip of 2 to 8 December, pressed time slots and the strip's days in turn.
 */
import { MONTH, MONTHS } from '../form-plan';
import { observedElements, statesOf, type ObservedElement } from './page-diff';

export interface DayOfYear {
  day: number;
  /** 1 to 12. */
  month: number;
  year?: number;
}

/** 18 December (2026), 18th of December. */
const DAY_MONTH = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\b(?:,?\\s+(\\d{4})\\b)?`, 'gi');
/** December 18(, 2026). */
const MONTH_DAY = new RegExp(`\\b${MONTH}\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4})\\b)?`, 'gi');
/** 2026-12-18. */
const ISO = /\b(\d{4})-(\d{2})-(\d{2})\b/g;
/** Roles a day of a date picker (or a time slot) takes. */
export const DAY_ROLES = new Set(['button', 'gridcell', 'link', 'option', 'cell', 'radio', 'tab']);
const LATER = /\b(?:next|later|forward)\b|^[›»→>]$/i;
const EARLIER = /\b(?:previous|prev|earlier|back)\b|^[‹«←<]$/i;
/** A button that shows other days has a label this short at most. */
const MAX_MOVE_LABEL = 24;
/** A date picker shows at least this many days. */
const MIN_DAYS = 3;

const monthOf = (name: string) => MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1;

/** The dates a text names, in its order. */
export function datesIn(text: string): DayOfYear[] {
  const found: { at: number; date: DayOfYear }[] = [];
  const add = (at: number, day: number, month: number, year?: string) => {
    if (day >= 1 && day <= 31 && month >= 1 && month <= 12) found.push({ at, date: { day, month, ...(year ? { year: Number(year) } : {}) } });
  };
  for (const m of text.matchAll(DAY_MONTH)) add(m.index!, Number(m[1]), monthOf(m[2]), m[3]);
  for (const m of text.matchAll(MONTH_DAY)) add(m.index!, Number(m[2]), monthOf(m[1]), m[3]);
  for (const m of text.matchAll(ISO)) add(m.index!, Number(m[3]), Number(m[2]), m[1]);
  return found.sort((a, b) => a.at - b.at).map((f) => f.date);
}

/** A day's order in time: the year taken as `year` when the date names none. */
const ordinal = (date: DayOfYear, year: number) => ((date.year ?? year) * 13 + date.month) * 32 + date.day;

const said = (date: DayOfYear) => `${date.day} ${['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'][date.month - 1]}${date.year ? ` ${date.year}` : ''}`;

/**
 * The year a date the task gives without one is meant in: of the years around the days shown,
 * the one that puts it nearest to them. Shown 6 to 12 January 2027, "18 December" is 18
 * December 2026 (the default model, told it was later, pressed "Later dates" into February).
 */
function yearMeant(target: DayOfYear, shown: DayOfYear[]): number {
  const shownYear = shown.find((d) => d.year)?.year ?? new Date().getUTCFullYear();
  if (target.year) return target.year;
  const ordinals = shown.map((d) => ordinal(d, shownYear));
  const [first, last] = [Math.min(...ordinals), Math.max(...ordinals)];
  const distance = (year: number) => {
    const at = ordinal(target, year);
    return at < first ? first - at : at > last ? at - last : 0;
  };
  return [shownYear - 1, shownYear, shownYear + 1].reduce((best, year) => (distance(year) < distance(best) ? year : best), shownYear);
}

/** The day elements of the observation (buttons, cells, options… labelled with one date). */
function dayElements(observation: string): (ObservedElement & { date: DayOfYear })[] {
  return observedElements(observation).flatMap((e) => {
    const dates = DAY_ROLES.has(e.role) ? datesIn(e.label) : [];
    return dates.length === 1 ? [{ ...e, date: dates[0] }] : [];
  });
}

const sameDay = (target: DayOfYear, days: (ObservedElement & { date: DayOfYear })[]) =>
  days.find((d) => d.date.day === target.day && d.date.month === target.month && (!target.year || !d.date.year || d.date.year === target.year));

/** The task's one date as said, and its element on this page when shown, not chosen yet and not disabled; undefined otherwise. */
export function taskDayShown(task: string, observation: string): { said: string; day: ObservedElement } | undefined {
  const asked = [...new Map(datesIn(task).map((d) => [`${d.day}/${d.month}/${d.year ?? ''}`, d])).values()];
  const days = dayElements(observation);
  if (asked.length !== 1 || days.length < MIN_DAYS) return undefined;
  const day = sameDay(asked[0], days);
  const states = day ? statesOf(day.line) : new Set<string>();
  if (!day || ['pressed', 'selected', 'checked', 'disabled'].some((state) => states.has(state))) return undefined;
  return { said: said(asked[0]), day };
}

/** The note for the observation, or undefined when the task names no one date or the page shows no days. */
export function dateInViewNote(task: string, observation: string): string | undefined {
  const asked = [...new Map(datesIn(task).map((d) => [`${d.day}/${d.month}/${d.year ?? ''}`, d])).values()];
  if (asked.length !== 1) return undefined;
  const target = asked[0];
  const elements = observedElements(observation);
  const days = dayElements(observation);
  if (days.length < MIN_DAYS) return undefined;
  const shownYear = days.find((d) => d.date.year)?.date.year ?? new Date().getUTCFullYear();
  const same = sameDay(target, days);
  if (same) {
    const states = statesOf(same.line);
    if (states.has('pressed') || states.has('selected') || states.has('checked')) return undefined;
    if (states.has('disabled')) return `Note: the task's date, ${said(target)}, is [${same.index}] ${same.role} "${same.label}", which the page shows disabled (not available).`;
    return `Note: the task's date, ${said(target)}, is [${same.index}] ${same.role} "${same.label}" on this page: press [${same.index}] to choose it.`;
  }
  const sorted = days.map((d) => ordinal(d.date, shownYear)).sort((a, b) => a - b);
  const wanted = ordinal(target, yearMeant(target, days.map((d) => d.date)));
  const later = wanted > sorted[sorted.length - 1];
  if (!later && wanted > sorted[0]) return undefined;
  const moves = (label: string) => movesDays(label) === (later ? 'later' : 'earlier');
  const move = elements.find((e) => ['button', 'link'].includes(e.role) && !statesOf(e.line).has('disabled') && moves(e.label));
  if (!move) return undefined;
  const first = days.reduce((a, b) => (ordinal(b.date, shownYear) < ordinal(a.date, shownYear) ? b : a));
  const last = days.reduce((a, b) => (ordinal(b.date, shownYear) > ordinal(a.date, shownYear) ? b : a));
  return `Note: the task's date, ${said(target)}, is not among the days shown (${said(first.date)} to ${said(last.date)}): press [${move.index}] ${move.role} "${move.label}" to show ${later ? 'later' : 'earlier'} ones.`;
}

/** Which way a label moves the days of a picker: a short label ("Later dates", "Next month", "‹"), not a link elsewhere ("Back to results"). */
export function movesDays(label: string): 'later' | 'earlier' | undefined {
  const text = label.trim();
  if (text.length > MAX_MOVE_LABEL || /\bto\b/i.test(text) || datesIn(text).length) return undefined;
  return LATER.test(text) ? 'later' : EARLIER.test(text) ? 'earlier' : undefined;
}

/** 19:30, 7.15. */
const TIME = /\b([01]?\d|2[0-3])[:.]([0-5]\d)\b(?!\s*[%€$£])/g;

/**
 * For a task that names one time of day ("at 19:30"), the element labelled with that time when
 * the page shows one and it is not chosen yet: the default model, "19:30" in its words, pressed
 * the slot "17:30" three times.
 */
export function timeInViewNote(task: string, observation: string): string | undefined {
  const time = timeAsked(task);
  const slot = time ? timeSlot(time, observation) : undefined;
  if (!slot) return undefined;
  const states = statesOf(slot.line);
  if (states.has('pressed') || states.has('selected') || states.has('checked')) return undefined;
  return `Note: the task's time, ${time!}, is [${slot.index}] ${slot.role} "${slot.label}"${states.has('disabled') ? ', which the page shows disabled (not available)' : ''}.`;
}

/** The one time of day a task names ("19:30"), or undefined for none or several. */
export function timeAsked(task: string): string | undefined {
  const times = [...new Set([...task.matchAll(TIME)].map((m) => `${Number(m[1])}:${m[2]}`))];
  return times.length === 1 ? times[0] : undefined;
}

/** The time of a slot's label that is a time alone ("19:30", "7.15"), or undefined. */
export function slotTimeOf(label: string): string | undefined {
  const m = /^(\d{1,2})[:.](\d{2})$/.exec(label.trim());
  return m ? `${Number(m[1])}:${m[2]}` : undefined;
}

/** The element of the page whose label is that time alone. */
export function timeSlot(time: string, observation: string): ObservedElement | undefined {
  return observedElements(observation).find((e) => DAY_ROLES.has(e.role) && slotTimeOf(e.label) === time);
}
