/**
 * A press of a time slot or a day that is not the task's, while the page shows the task's (or
 * the button that shows it): held once per element, with the one to press. The default model,
 * asked for 19:30 and told which slot it was, pressed "17:30" ten times; asked for 18
 * December on a strip of 2 to 8 December, it pressed the strip's days in turn.
 */
import { dateInViewNote, datesIn, DAY_ROLES, movesDays, slotTimeOf, taskDayShown, timeAsked, timeSlot } from './observe/date-in-view';
import { observedElements, type ObservedElement } from './observe/page-diff';

/** How a held press of another slot or day begins. */
export const SLOT_HELD = 'Not pressed: the task asks for';

/** The note when [index] is a slot or day other than the task's one, or undefined. */
export function otherSlot(task: string, observation: string, index: number): string | undefined {
  const pressed = observedElements(observation).find((e) => e.index === index);
  if (!pressed || !DAY_ROLES.has(pressed.role)) return undefined;
  const again = `if [${index}] is what you meant, press [${index}] again.`;
  const time = timeAsked(task);
  const pressedTime = slotTimeOf(pressed.label);
  if (time && pressedTime) {
    const slot = pressedTime === time ? undefined : timeSlot(time, observation);
    return slot && `${SLOT_HELD} ${time}, which is [${slot.index}] ${slot.role} "${slot.label}"; [${index}] is "${pressed.label}". To choose ${time}, press [${slot.index}]; ${again}`;
  }
  const asked = datesIn(task);
  const days = datesIn(pressed.label);
  if (asked.length === 1 && movesDays(pressed.label)) return awayFromDay(task, observation, index, pressed.label);
  if (asked.length === 1 && !days.length) return dayFirst(task, observation, pressed);
  if (asked.length !== 1 || days.length !== 1) return undefined;
  const [want, day] = [asked[0], days[0]];
  if (want.day === day.day && want.month === day.month && (!want.year || !day.year || want.year === day.year)) return undefined;
  // where the task's day is: on this page, or behind the button that shows other days
  const where = dateInViewNote(task, observation);
  if (!where) return undefined;
  return `${SLOT_HELD} another day than [${index}] "${pressed.label}": ${where.replace(/^Note: /, '')} If [${index}] is what you meant, press [${index}] again.`;
}

/**
 * A press of the button that shows other days while the task's day is on this page (and not
 * chosen yet): held with that day's element. The default model, told "the task's date, 18
 * December, is [30] button "Friday 18 December 2026" on this page", pressed "Later dates"
 * three times and went past it into January.
 */
function awayFromDay(task: string, observation: string, index: number, label: string): string | undefined {
  const shown = taskDayShown(task, observation)?.day;
  if (!shown) return undefined;
  return `${SLOT_HELD} a day this page shows: [${shown.index}] ${shown.role} "${shown.label}"; [${index}] "${label}" would show other days. To choose it, press [${shown.index}]; if [${index}] is what you meant, press [${index}] again.`;
}

/**
 * A press of another element (a form's "Continue") while the task's day is shown and not
 * chosen: held with the day. The default model, told "the task's date, 9 March 2027, is [106]
 * button "Tuesday 9 March 2027" on this page", pressed "Continue" on the empty date.
 */
function dayFirst(task: string, observation: string, pressed: ObservedElement): string | undefined {
  const shown = taskDayShown(task, observation);
  if (!shown) return undefined;
  const { day } = shown;
  return `${SLOT_HELD} ${shown.said}, which is [${day.index}] ${day.role} "${day.label}", not chosen yet; [${pressed.index}] is ${pressed.role} "${pressed.label}". Press [${day.index}] first; if [${pressed.index}] is what you meant, press [${pressed.index}] again.`;
}
