import { otherSlot, SLOT_HELD } from './slot-check';

const page = (...elements: string[]) => ['URL: http://olive.test/book', 'Title: Book a table', 'Interactive elements:', ...elements, 'Visible text:', 'Book a table'].join('\n');
const strip = page(
  '[1] button "Later dates"',
  '[2] button "Wednesday 2 December 2026"',
  '[3] button "Thursday 3 December 2026"',
  '[4] button "Friday 4 December 2026"',
  '[5] button "17:30"',
  '[6] button "19:30"',
  '[7] button "Book table"',
);
const task = 'Book a table for 4 people on Friday 18 December at 19:30.';

describe('a press of a slot or a day the task does not name', () => {
  it('is held with the slot of the task’s time', () => {
    expect(otherSlot(task, strip, 5)).toBe(`${SLOT_HELD} 19:30, which is [6] button "19:30"; [5] is "17:30". To choose 19:30, press [6]; if [5] is what you meant, press [5] again.`);
  });

  it('is held with the button that shows the task’s day, or the day itself', () => {
    expect(otherSlot(task, strip, 4)).toBe(
      `${SLOT_HELD} another day than [4] "Friday 4 December 2026": the task's date, 18 December, is not among the days shown (2 December 2026 to 4 December 2026): press [1] button "Later dates" to show later ones. If [4] is what you meant, press [4] again.`,
    );
    const shown = strip.replace('"Wednesday 2 December 2026"', '"Friday 18 December 2026"');
    expect(otherSlot(task, shown, 3)).toContain(`the task's date, 18 December, is [2] button "Friday 18 December 2026" on this page: press [2] to choose it.`);
  });

  it('holds the button that shows other days while the task’s day is on this page', () => {
    const shown = strip.replace('"Wednesday 2 December 2026"', '"Friday 18 December 2026"');
    expect(otherSlot(task, shown, 1)).toBe(`${SLOT_HELD} a day this page shows: [2] button "Friday 18 December 2026"; [1] "Later dates" would show other days. To choose it, press [2]; if [1] is what you meant, press [1] again.`);
    expect(otherSlot(task, shown.replace('"Friday 18 December 2026"', '"Friday 18 December 2026" pressed'), 1)).toBeUndefined();
  });

  it('holds a press of another element (a form’s button) while the task’s day is on this page, not chosen', () => {
    const shown = strip.replace('"Wednesday 2 December 2026"', '"Friday 18 December 2026"');
    expect(otherSlot(task, shown, 7)).toBe(`${SLOT_HELD} 18 December, which is [2] button "Friday 18 December 2026", not chosen yet; [7] is button "Book table". Press [2] first; if [7] is what you meant, press [7] again.`);
    expect(otherSlot(task, shown.replace('"Friday 18 December 2026"', '"Friday 18 December 2026" pressed'), 7)).toBeUndefined();
  });

  it('is not held for the task’s own slot or day, another element, a slot the page lacks, or a task of no time or date', () => {
    expect(otherSlot(task, strip, 6)).toBeUndefined();
    expect(otherSlot(task, strip, 7)).toBeUndefined();
    expect(otherSlot(task, strip, 1)).toBeUndefined();
    expect(otherSlot(task.replace('19:30', '20:00'), strip, 5)).toBeUndefined();
    expect(otherSlot('Book a table for 4 people.', strip, 5)).toBeUndefined();
    expect(otherSlot('Book a table for 4 people.', strip, 4)).toBeUndefined();
    expect(otherSlot(task, strip.replace('"Thursday 3 December 2026"', '"Friday 18 December 2026" pressed'), 4)).toBeUndefined();
  });
});
