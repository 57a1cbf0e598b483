/**
 * A trigger's schedule fields (`at`, `every`, `cron` + `timezone`) as a Temporal
 * ScheduleSpec. Validation happens here, before Temporal sees anything, so a user gets a
 * 400 that names the field and says what is wrong; the next run times themselves always
 * come from the schedule's own description, never from a calculation of ours.
 */
import type { ScheduleSpec } from '@temporalio/client';
import { InvalidParameterError, MissingFieldError } from './errors';

export const SCHEDULE_TYPES = ['at', 'every', 'cron'] as const;
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];

/** The fields of a trigger that decide when it runs. */
export interface ScheduleFields {
  scheduleType: ScheduleType;
  scheduleAt: Date | null;
  scheduleInterval: string | null;
  scheduleCron: string | null;
  timezone: string;
}

export const SCHEDULE_FIELD_NAMES = ['scheduleType', 'scheduleAt', 'scheduleInterval', 'scheduleCron', 'timezone'] as const;

const MONTHS = ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'] as const;

// ---- intervals -----------------------------------------------------------------------

const INTERVAL = /^([1-9]\d{0,5})(m|h|d)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export const INTERVAL_LIMITS = { minMs: 60_000, maxMs: 366 * 86_400_000 } as const;

/** `<n>m`, `<n>h` or `<n>d` in milliseconds; throws INVALID_PARAMETER otherwise. */
export function parseInterval(value: string): number {
  const m = INTERVAL.exec(value.trim());
  if (!m) throw new InvalidParameterError('scheduleInterval', value, 'scheduleInterval must be a whole number followed by m, h or d (minutes, hours, days), e.g. 15m, 2h, 1d');
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  if (ms > INTERVAL_LIMITS.maxMs) throw new InvalidParameterError('scheduleInterval', value, 'scheduleInterval must be at most 366d');
  return ms;
}

// ---- time zones ----------------------------------------------------------------------

/** An IANA zone name Node knows (Intl throws a RangeError on unknown ones). */
export function isValidTimezone(zone: string): boolean {
  if (!zone || zone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function assertTimezone(zone: string): void {
  if (!isValidTimezone(zone)) throw new InvalidParameterError('timezone', zone, `timezone "${zone}" is not a known IANA time zone (e.g. UTC, Europe/Paris, America/New_York)`);
}

// ---- cron ----------------------------------------------------------------------------

const CRON_MACROS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];
const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface CronField {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** Value of names[0]. */
  nameBase?: number;
}

const CRON_FIELDS: CronField[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  // 7 is Sunday too, as in most crons (Temporal accepts it).
  { name: 'day of week', min: 0, max: 7, names: DAY_NAMES, nameBase: 0 },
];

/**
 * Checks a standard five-field cron expression (minute hour day-of-month month
 * day-of-week; `*`, lists, ranges, steps, month and day names) or one of the macros
 * `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`. Returns what is wrong, or null.
 */
export function cronProblem(expression: string): string | null {
  const expr = expression.trim();
  if (!expr) return 'it is empty';
  if (expr.startsWith('@')) return CRON_MACROS.includes(expr.toLowerCase()) ? null : `unknown macro ${expr} (use one of ${CRON_MACROS.join(', ')})`;
  const parts = expr.split(/\s+/);
  if (parts.length !== 5) return `it has ${parts.length} field${parts.length === 1 ? '' : 's'}; a cron expression has 5 (minute hour day-of-month month day-of-week)`;
  for (let i = 0; i < 5; i++) {
    const problem = cronFieldProblem(parts[i], CRON_FIELDS[i]);
    if (problem) return problem;
  }
  return null;
}

function cronFieldProblem(text: string, field: CronField): string | null {
  for (const item of text.split(',')) {
    if (!item) return `the ${field.name} field "${text}" has an empty list item`;
    const [range, stepText, extra] = item.split('/');
    if (extra !== undefined) return `the ${field.name} field item "${item}" has more than one /`;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1) return `the step in the ${field.name} field item "${item}" must be a positive number`;
      if (Number(stepText) > field.max - field.min + 1) return `the step in the ${field.name} field item "${item}" is larger than the field's range`;
    }
    if (range === '*') continue;
    const bounds = range.split('-');
    if (bounds.length > 2) return `the ${field.name} field item "${item}" is not a value or a range`;
    const values: number[] = [];
    for (const b of bounds) {
      const v = cronValue(b, field);
      if (v === null) return `"${b}" is not a valid ${field.name} (${field.min}-${field.max}${field.names ? ` or ${field.names[0]}-${field.names[field.names.length - 1]}` : ''})`;
      values.push(v);
    }
    if (values.length === 2 && values[0] > values[1]) return `the ${field.name} range "${range}" runs backwards`;
  }
  return null;
}

function cronValue(text: string, field: CronField): number | null {
  if (/^\d{1,2}$/.test(text)) {
    const n = Number(text);
    return n >= field.min && n <= field.max ? n : null;
  }
  const idx = field.names?.indexOf(text.toUpperCase()) ?? -1;
  return idx >= 0 ? idx + (field.nameBase ?? 0) : null;
}

// ---- at ------------------------------------------------------------------------------

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date-time in the future. One without an offset (or a date alone, meaning its
 * midnight) is the wall-clock time in `timezone` (the trigger's, UTC by default): the same
 * instant on every server. A time that a daylight-saving change skips is read with the
 * offset before the change (02:30 on a spring-forward night is 03:30); one it repeats is the
 * first of the two.
 */
export function parseAt(value: unknown, now = Date.now(), timezone = 'UTC'): Date {
  const invalid = () => new InvalidParameterError('scheduleAt', value, 'scheduleAt must be an ISO 8601 date-time, e.g. 2030-01-31T09:00:00Z');
  if (typeof value !== 'string' || !ISO_DATETIME.test(value.trim())) throw invalid();
  const text = value.trim().replace(' ', 'T');
  const hasOffset = /[T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text);
  let at: Date;
  if (hasOffset) {
    at = new Date(text);
  } else {
    // The wall-clock fields, validated by a round trip through UTC (no 2026-02-30).
    const wall = new Date(`${text.includes('T') ? text : `${text}T00:00`}Z`);
    if (Number.isNaN(wall.getTime()) || wall.toISOString().slice(0, 10) !== text.slice(0, 10)) throw invalid();
    at = new Date(wallClockInstant(wall.getTime(), timezone));
  }
  if (Number.isNaN(at.getTime())) throw invalid();
  if (at.getTime() <= now) throw new InvalidParameterError('scheduleAt', value, `scheduleAt must be in the future (it is ${at.toISOString()}, now is ${new Date(now).toISOString()})`);
  return at;
}

/** How far `zone`'s clocks are ahead of UTC at `instant` (ms). */
function zoneOffset(instant: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(new Date(instant));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const shown = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return shown - (instant - (((instant % 1000) + 1000) % 1000));
}

/** The instant at which `zone`'s clocks show `wall` (its fields given as if in UTC). */
export function wallClockInstant(wall: number, zone: string): number {
  // The offsets a day before and a day after: equal, unless a change falls near this time.
  const before = wall - zoneOffset(wall - 86_400_000, zone);
  const after = wall - zoneOffset(wall + 86_400_000, zone);
  const shows = (t: number) => t + zoneOffset(t, zone) === wall;
  if (shows(before)) return before; // also the first of a repeated hour
  if (shows(after)) return after;
  return before; // a skipped time: the offset before the change
}

// ---- the whole schedule --------------------------------------------------------------

/** Checks that the fields the type needs are present and valid; throws the contract's 400s. */
export function validateSchedule(fields: ScheduleFields, opts: { now?: number; checkAtInFuture?: boolean } = {}): void {
  assertTimezone(fields.timezone);
  switch (fields.scheduleType) {
    case 'at':
      if (!fields.scheduleAt) throw new MissingFieldError('scheduleAt', 'scheduleAt is required when scheduleType is at');
      if (opts.checkAtInFuture !== false && fields.scheduleAt.getTime() <= (opts.now ?? Date.now())) {
        throw new InvalidParameterError('scheduleAt', fields.scheduleAt.toISOString(), 'scheduleAt must be in the future');
      }
      return;
    case 'every':
      if (!fields.scheduleInterval) throw new MissingFieldError('scheduleInterval', 'scheduleInterval is required when scheduleType is every');
      parseInterval(fields.scheduleInterval);
      return;
    case 'cron': {
      if (!fields.scheduleCron) throw new MissingFieldError('scheduleCron', 'scheduleCron is required when scheduleType is cron');
      const problem = cronProblem(fields.scheduleCron);
      if (problem) throw new InvalidParameterError('scheduleCron', fields.scheduleCron, `scheduleCron "${fields.scheduleCron}" is not a valid cron expression: ${problem}`);
      return;
    }
  }
}

/**
 * The Temporal spec of a (validated) schedule: `at` is one calendar instant in UTC
 * (rounded up to the whole second, the calendar's resolution), `every` an interval,
 * `cron` a cron expression evaluated in the trigger's time zone.
 */
export function toScheduleSpec(fields: ScheduleFields): ScheduleSpec {
  switch (fields.scheduleType) {
    case 'at': {
      const ms = fields.scheduleAt!.getTime();
      const at = new Date(Math.ceil(ms / 1000) * 1000);
      return {
        calendars: [
          {
            year: at.getUTCFullYear(),
            month: MONTHS[at.getUTCMonth()],
            dayOfMonth: at.getUTCDate(),
            hour: at.getUTCHours(),
            minute: at.getUTCMinutes(),
            second: at.getUTCSeconds(),
            comment: `once at ${at.toISOString()}`,
          },
        ],
        timezone: 'UTC',
      };
    }
    case 'every':
      return { intervals: [{ every: parseInterval(fields.scheduleInterval!) }] };
    case 'cron':
      return { cronExpressions: [fields.scheduleCron!.trim()], timezone: fields.timezone };
  }
}
