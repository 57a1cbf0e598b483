import { dateInViewNote, datesIn, timeInViewNote } from './date-in-view';

const task = 'Book a table at Olive for 4 people on Friday 18 December at 19:30, in the name of Okafor.';
/** A week strip from `first` December 2026, seven days; `pressed` the index of a day shown pressed. */
const strip = (first: number, opts: { pressed?: number; disabled?: number[] } = {}) => {
  const names = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const days = Array.from({ length: 7 }, (_, i) => {
    const day = first + i;
    const index = 4 + i;
    const states = `${opts.pressed === index ? ' pressed' : ''}${opts.disabled?.includes(index) ? ' disabled' : ''}`;
    return `[${index}] button "${names[(day + 1) % 7]} ${day} December 2026"${states}`;
  });
  return ['URL: http://table.test/', 'Interactive elements:', '[1] select "Guests" value="2"', `[2] button "Earlier dates"${first <= 2 ? ' disabled' : ''}`, '[3] button "Later dates"', ...days, '[11] button "19:30"', 'Visible text:', 'Book a table'].join('\n');
};

describe('the dates a text names', () => {
  it('reads a day and a month in either order, with a year or none, and ISO dates', () => {
    expect(datesIn('on Friday 18 December at 19:30')).toEqual([{ day: 18, month: 12 }]);
    expect(datesIn('Thursday, March 5, 2027 or the 6th of Mar')).toEqual([{ day: 5, month: 3, year: 2027 }, { day: 6, month: 3 }]);
    expect(datesIn('check in 2027-03-05')).toEqual([{ day: 5, month: 3, year: 2027 }]);
    expect(datesIn('December 2026, you may book 40 days ahead')).toEqual([]);
  });
});

describe('the day the task names, on a page of days', () => {
  it('is named by its element when the page shows it', () => {
    expect(dateInViewNote(task, strip(16))).toBe('Note: the task\'s date, 18 December, is [6] button "Friday 18 December 2026" on this page: press [6] to choose it.');
    expect(dateInViewNote(task, strip(16, { disabled: [6] }))).toBe('Note: the task\'s date, 18 December, is [6] button "Friday 18 December 2026", which the page shows disabled (not available).');
  });

  it('is said not shown, with the button that shows later or earlier days', () => {
    expect(dateInViewNote(task, strip(2))).toBe('Note: the task\'s date, 18 December, is not among the days shown (2 December 2026 to 8 December 2026): press [3] button "Later dates" to show later ones.');
    expect(dateInViewNote('Book for 3 December.', strip(9).replace('[2] button "Earlier dates"', '[2] link "Back to results"'))).toBeUndefined();
    expect(dateInViewNote('Book for 3 December.', strip(9))).toBe('Note: the task\'s date, 3 December, is not among the days shown (9 December 2026 to 15 December 2026): press [2] button "Earlier dates" to show earlier ones.');
  });

  it('takes a date without a year in the year nearest the days shown: earlier from January, later from early December', () => {
    const january = strip(9).replace(/(\d+) December 2026/g, (_, d: string) => `${d} January 2027`);
    expect(dateInViewNote(task, january)).toBe('Note: the task\'s date, 18 December, is not among the days shown (9 January 2027 to 15 January 2027): press [2] button "Earlier dates" to show earlier ones.');
    expect(dateInViewNote('Book for 5 January.', strip(23))).toBe('Note: the task\'s date, 5 January, is not among the days shown (23 December 2026 to 29 December 2026): press [3] button "Later dates" to show later ones.');
  });

  it('says nothing once the day is pressed, for a task of no date or of two, or on a page of fewer than three days', () => {
    expect(dateInViewNote(task, strip(16, { pressed: 6 }))).toBeUndefined();
    expect(dateInViewNote('Book a table for 4 people at 19:30.', strip(2))).toBeUndefined();
    expect(dateInViewNote('Move my booking from 4 December to 18 December.', strip(2))).toBeUndefined();
    expect(dateInViewNote(task, ['Interactive elements:', '[1] button "Friday 4 December 2026"', '[2] button "Later dates"', 'Visible text:'].join('\n'))).toBeUndefined();
  });
});

describe('the time the task names, on a page of time slots', () => {
  it('is named by the element labelled with it until it is chosen', () => {
    expect(timeInViewNote(task, strip(16))).toBe('Note: the task\'s time, 19:30, is [11] button "19:30".');
    expect(timeInViewNote('Book for 7.15 pm.', strip(16).replace('"19:30"', '"07:15"'))).toBe('Note: the task\'s time, 7:15, is [11] button "07:15".');
    expect(timeInViewNote(task, strip(16).replace('"19:30"', '"19:30" pressed'))).toBeUndefined();
    expect(timeInViewNote('Book for 4 people.', strip(16))).toBeUndefined();
    expect(timeInViewNote('Between 18:00 and 19:30.', strip(16))).toBeUndefined();
  });
});
