/** A date as people write it, read into the form a date input takes (YYYY-MM-DD). */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * `text` as YYYY-MM-DD, or undefined when it is no date: 2026-03-14, 2026/3/14, 03/14/2026
 * (month first, unless the first number cannot be a month), 14.03.2026, March 14 2026,
 * Mar 14, 2026, 14 March 2026, Saturday, March 14th, 2026.
 */
export function isoDate(text: string): string | undefined {
  const t = text.trim().toLowerCase().replace(/(\d)(st|nd|rd|th)\b/g, '$1').replace(/,/g, ' ').replace(/\s+/g, ' ');
  let m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(t);
  if (m) return valid(+m[1], +m[2], +m[3]);
  m = /^(\d{1,2})([/.-])(\d{1,2})\2(\d{4})$/.exec(t);
  if (m) {
    const [first, second, year] = [+m[1], +m[3], +m[4]];
    // A dot is the day-first form; a slash is month first unless that cannot be.
    const dayFirst = m[2] === '.' || first > 12;
    return dayFirst ? valid(year, second, first) : valid(year, first, second);
  }
  const words = t.replace(/^[a-z]+day /, '').split(' ');
  const month = (word: string) => MONTHS.indexOf(word.slice(0, 3)) + 1;
  if (words.length === 3 && month(words[0]) > 0) return valid(+words[2], month(words[0]), +words[1]);
  if (words.length === 3 && month(words[1]) > 0) return valid(+words[2], month(words[1]), +words[0]);
  return undefined;
}

function valid(year: number, month: number, day: number): string | undefined {
  if (!Number.isInteger(year) || !Number.isInteger(month) || !Number.isInteger(day) || year < 1000 || year > 9999) return undefined;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}
