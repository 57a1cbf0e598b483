import { isoDate } from './dates';

describe('a date as people write it', () => {
  it('is read in the common forms', () => {
    for (const text of ['2026-03-14', '2026/3/14', '03/14/2026', '3/14/2026', '14/03/2026', '14.03.2026', 'March 14 2026', 'Mar 14, 2026', '14 March 2026', 'Saturday, March 14th, 2026', 'march 14th 2026']) {
      expect([text, isoDate(text)]).toEqual([text, '2026-03-14']);
    }
  });

  it('is no date when it is not one', () => {
    for (const text of ['2026-02-30', '13/13/2026', 'tomorrow', '555-0142', 'March 2026', '']) expect([text, isoDate(text)]).toEqual([text, undefined]);
  });
});
