import type { z } from 'zod';
import { COORDINATES } from './message.schema';
import { TASK_LIMITS } from './task.schema';
import { InvalidParameterError, MissingFieldError, ServiceError } from '../errors';

/**
 * Parses a request part with its zod schema and turns the first problem into the
 * contract's error: MISSING_REQUIRED_FIELD, INVALID_PARAMETER (with bounds) or INVALID_PARAMS.
 */
export function parseRequest<S extends z.ZodType>(schema: S, input: unknown, prefix = ''): z.infer<S> {
  const res = schema.safeParse(input);
  if (res.success) return res.data;
  throw toServiceError(res.error, input, prefix);
}

export function toServiceError(error: z.ZodError, input: unknown, prefix = ''): ServiceError {
  const issue = error.issues[0];
  const field = prefix + issue.path.map(String).join('.');
  // A secret's value is never repeated, not even to its sender.
  const value = issue.path.includes('secrets') && issue.path.includes('fields') && issue.path.length > issue.path.indexOf('fields') + 1 ? '[redacted]' : valueAt(input, issue.path);
  if (value === undefined && issue.code !== 'custom') return new MissingFieldError(field);
  switch (issue.code) {
    case 'invalid_type':
      // null is a field left out: the task and session schemas take it as the default of an
      // optional field, so one refused here is required. An array item cannot be left out:
      // null there is a wrong value.
      if (value === null && typeof issue.path[issue.path.length - 1] !== 'number') return new MissingFieldError(field);
      return new InvalidParameterError(field, value, `${field} must be ${issue.expected === 'int' ? 'an integer' : `${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`}`);
    case 'too_small':
    case 'too_big': {
      const bounds = boundsOf(issue);
      if (typeof value === 'string' && issue.code === 'too_small' && issue.minimum === 1) {
        return new MissingFieldError(field, `${field} must not be empty`);
      }
      const range = bounds.min !== undefined && bounds.max !== undefined ? `between ${bounds.min} and ${bounds.max}` : issue.message;
      return new InvalidParameterError(field, value, typeof value === 'number' ? `${field} must be ${range}` : `${field}: ${issue.message}`, bounds);
    }
    case 'invalid_value':
      return new InvalidParameterError(field, value, `${field} must be one of: ${issue.values.map(String).join(', ')}`);
    case 'invalid_union':
      if ('discriminator' in issue && issue.discriminator) {
        const d = String(issue.discriminator);
        // zod may already name the discriminator in the path
        const at = field === d || field.endsWith(`.${d}`) ? field : `${field}.${d}`;
        const v = at === field ? value : valueAt(value, [d]);
        return new InvalidParameterError(at, v, `${at} is not a known ${d}`);
      }
      return new InvalidParameterError(field, value, `${field}: ${issue.message}`);
    default: {
      // A custom check may say which value to report (e.g. not a 64 KB schema echoed back).
      const shown = issue.code === 'custom' && issue.params && 'value' in issue.params ? issue.params.value : value;
      return new InvalidParameterError(field, shown, field ? `${field}: ${issue.message}` : issue.message);
    }
  }
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

/** Both bounds of a numeric field: zod reports only the one crossed, the contract wants both. */
function boundsOf(issue: z.core.$ZodIssue): { min?: number; max?: number } {
  const known = BOUNDS[String(issue.path[issue.path.length - 1])];
  if (known) return { min: known.min, max: known.max };
  if (issue.code === 'too_small') return { min: Number(issue.minimum) };
  if (issue.code === 'too_big') return { max: Number(issue.maximum) };
  return {};
}

const BOUNDS: Record<string, { min: number; max: number }> = { ...TASK_LIMITS, ...COORDINATES };
