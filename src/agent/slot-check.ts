/**
 * A press of a time slot or a day that is not the task's, while the page shows the task's (or
 * the button that shows it): held once per element, with the one to press. The default model,
 * asked for 19:30 and told which slot it was, pressed "17:30" ten times; asked for 18
 * December on a strip of 2 to 8 December, it pressed the strip's days in turn.
 */
import { dateInViewNote, datesIn, DAY_ROLES, movesDays, slotTimeOf, timeAsked, timeSlot } from './observe/date-in-view';
import { observedElements } from './observe/page-diff';

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
  const shown = / is \[(\d+)\] (\S+) "(.*)" on this page\.$/.exec(dateInViewNote(task, observation) ?? '');
  if (!shown) return undefined;
  return `${SLOT_HELD} a day this page shows: [${shown[1]}] ${shown[2]} "${shown[3]}"; [${index}] "${label}" would show other days. To choose it, press [${shown[1]}]; if [${index}] is what you meant, press [${index}] again.`;
}
