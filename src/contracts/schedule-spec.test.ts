import { cronProblem, isValidTimezone, parseAt, parseInterval, toScheduleSpec, validateSchedule, type ScheduleFields } from './schedule-spec';
import { errorOf } from '../../test/support/errors';

const base: ScheduleFields = { scheduleType: 'cron', scheduleAt: null, scheduleInterval: null, scheduleCron: null, timezone: 'UTC' };
const NOW = Date.parse('2026-11-23T10:00:00Z');

describe('cron expressions', () => {
  it.each(['* * * * *', '0 9 * * 1-5', '*/15 0-6,22,23 1 JAN-MAR MON-FRI', '5/15 * * * *', '0 0 1 */3 *', '0 9 * * 7', '30 8 * * sun', '@daily', '@hourly', '@weekly', '@monthly', '@yearly'])('accepts %s', (expr) => {
    expect(cronProblem(expr)).toBeNull();
  });

  it.each([
    ['', 'it is empty'],
    ['* * * *', 'it has 4 fields; a cron expression has 5 (minute hour day-of-month month day-of-week)'],
    ['0 0 9 * * *', 'it has 6 fields; a cron expression has 5 (minute hour day-of-month month day-of-week)'],
    ['60 * * * *', '"60" is not a valid minute (0-59)'],
    ['0 24 * * *', '"24" is not a valid hour (0-23)'],
    ['0 0 0 * *', '"0" is not a valid day of month (1-31)'],
    ['0 0 1 13 *', '"13" is not a valid month (1-12 or JAN-DEC)'],
    ['0 0 * * 8', '"8" is not a valid day of week (0-7 or SUN-SAT)'],
    ['0 9-5 * * *', 'the hour range "9-5" runs backwards'],
    ['*/0 * * * *', 'the step in the minute field item "*/0" must be a positive number'],
    ['1,,2 * * * *', 'the minute field "1,,2" has an empty list item'],
    ['@every 5m', 'unknown macro @every 5m (use one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)'],
    ['0 9 * * MON#2', '"MON#2" is not a valid day of week (0-7 or SUN-SAT)'],
  ])('refuses %j: %s', (expr, problem) => {
    expect(cronProblem(expr)).toBe(problem);
  });
});

describe('intervals', () => {
  it.each([
    ['1m', 60_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['366d', 366 * 86_400_000],
  ])('%s is %d ms', (text, ms) => expect(parseInterval(text)).toBe(ms));

  it.each(['0m', '5', '5s', '1.5h', 'm', '10 m', '-1h', '2w', '367d'])('refuses %s with INVALID_PARAMETER', (text) => {
    const e = errorOf(() => parseInterval(text));
    expect(e.code).toBe('INVALID_PARAMETER');
    expect(e.details).toEqual({ parameter: 'scheduleInterval', value: text });
  });
});

describe('time zones', () => {
  it('knows IANA zones and refuses others', () => {
    expect(isValidTimezone('UTC')).toBe(true);
    expect(isValidTimezone('America/New_York')).toBe(true);
    expect(isValidTimezone('Asia/Kolkata')).toBe(true);
    expect(isValidTimezone('Mars/Olympus_Mons')).toBe(false);
    expect(isValidTimezone('')).toBe(false);
  });

  it('refuses an unknown zone with a 400 naming it', () => {
    const e = errorOf(() => validateSchedule({ ...base, scheduleCron: '0 9 * * *', timezone: 'Europe/Atlantis' }));
    expect(e).toMatchObject({ code: 'INVALID_PARAMETER', status: 400, details: { parameter: 'timezone', value: 'Europe/Atlantis' } });
    expect(e.message).toBe('timezone "Europe/Atlantis" is not a known IANA time zone (e.g. UTC, Europe/Paris, America/New_York)');
  });
});

describe('at', () => {
  it('reads ISO 8601 with an offset, and without one as UTC', () => {
    expect(parseAt('2026-11-23T13:00:00+02:00', NOW).toISOString()).toBe('2026-11-23T11:00:00.000Z');
    expect(parseAt('2026-11-23T12:30:00', NOW).toISOString()).toBe('2026-11-23T12:30:00.000Z');
    expect(parseAt('2026-11-24', NOW).toISOString()).toBe('2026-11-24T00:00:00.000Z');
  });

  it('reads one without an offset as the wall-clock time of the trigger’s time zone', () => {
    const at = (text: string, zone: string) => parseAt(text, NOW, zone).toISOString();
    expect(at('2027-01-31T09:00:00', 'Europe/Paris')).toBe('2027-01-31T08:00:00.000Z'); // winter, +01:00
    expect(at('2027-07-01T09:00', 'Europe/Paris')).toBe('2027-07-01T07:00:00.000Z'); // summer, +02:00
    expect(at('2027-07-01T09:00:00', 'America/New_York')).toBe('2027-07-01T13:00:00.000Z');
    expect(at('2027-01-05', 'Asia/Tokyo')).toBe('2027-01-04T15:00:00.000Z'); // a date alone: its midnight there
    expect(at('2027-03-01T10:15:30.250', 'Asia/Kolkata')).toBe('2027-03-01T04:45:30.250Z');
    // An offset given wins over the time zone.
    expect(at('2027-01-31T09:00:00Z', 'Europe/Paris')).toBe('2027-01-31T09:00:00.000Z');
    // Daylight-saving changes in Paris: 02:30 does not exist on 2027-03-28 (read as 03:30 summer
    // time), and exists twice on 2027-10-31 (the first, still summer time).
    expect(at('2027-03-28T02:30:00', 'Europe/Paris')).toBe('2027-03-28T01:30:00.000Z');
    expect(at('2027-10-31T02:30:00', 'Europe/Paris')).toBe('2027-10-31T00:30:00.000Z');
    expect(at('2027-10-31T03:30:00', 'Europe/Paris')).toBe('2027-10-31T02:30:00.000Z');
    expect(errorOf(() => parseAt('2027-02-30T09:00:00', NOW, 'Europe/Paris')).message).toBe('scheduleAt must be an ISO 8601 date-time, e.g. 2030-01-31T09:00:00Z');
  });

  it('refuses the past and the malformed', () => {
    const past = errorOf(() => parseAt('2026-11-23T09:59:59Z', NOW));
    expect(past).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'scheduleAt', value: '2026-11-23T09:59:59Z' } });
    expect(past.message).toMatch(/^scheduleAt must be in the future/);
    expect(errorOf(() => parseAt('tomorrow', NOW)).message).toBe('scheduleAt must be an ISO 8601 date-time, e.g. 2030-01-31T09:00:00Z');
    expect(errorOf(() => parseAt(1764000000000, NOW)).code).toBe('INVALID_PARAMETER');
    expect(errorOf(() => parseAt('2026-13-40T00:00:00Z', NOW)).code).toBe('INVALID_PARAMETER');
  });
});

describe('validateSchedule', () => {
  it('requires the field of the type', () => {
    expect(errorOf(() => validateSchedule({ ...base, scheduleType: 'at' })).message).toBe('scheduleAt is required when scheduleType is at');
    expect(errorOf(() => validateSchedule({ ...base, scheduleType: 'every' })).message).toBe('scheduleInterval is required when scheduleType is every');
    const cron = errorOf(() => validateSchedule({ ...base, scheduleType: 'cron' }));
    expect(cron).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'scheduleCron' } });
  });

  it('says what is wrong with a cron expression', () => {
    const e = errorOf(() => validateSchedule({ ...base, scheduleCron: '0 25 * * *' }));
    expect(e.message).toBe('scheduleCron "0 25 * * *" is not a valid cron expression: "25" is not a valid hour (0-23)');
    expect(e.details).toEqual({ parameter: 'scheduleCron', value: '0 25 * * *' });
  });
});

describe('toScheduleSpec', () => {
  it('maps at to one UTC calendar instant, rounded up to the second', () => {
    expect(toScheduleSpec({ ...base, scheduleType: 'at', scheduleAt: new Date('2030-03-05T10:30:06.200Z') })).toEqual({
      calendars: [{ year: 2030, month: 'MARCH', dayOfMonth: 5, hour: 10, minute: 30, second: 7, comment: 'once at 2030-03-05T10:30:07.000Z' }],
      timezone: 'UTC',
    });
  });

  it('maps every to an interval', () => {
    expect(toScheduleSpec({ ...base, scheduleType: 'every', scheduleInterval: '90m' })).toEqual({ intervals: [{ every: 5_400_000 }] });
  });

  it('maps cron to a cron expression in the trigger time zone', () => {
    expect(toScheduleSpec({ ...base, scheduleCron: ' 0 9 * * 1-5 ', timezone: 'America/New_York' })).toEqual({ cronExpressions: ['0 9 * * 1-5'], timezone: 'America/New_York' });
  });
});
