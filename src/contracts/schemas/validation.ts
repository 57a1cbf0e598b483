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
  const value = shownValue(input, issue.path);
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

const REDACTED = '[redacted]';

/**
 * The value at `path` as an error may show it: every value under a task's `secrets` (a
 * field's value, a seed, whatever an unknown key holds) is redacted; names, the shape and
 * an entry's `match` stay, so the sender still sees what was wrong.
 */
function shownValue(input: unknown, path: PropertyKey[]): unknown {
  const at = path.indexOf('secrets');
  if (at < 0) return withSecretsRedacted(valueAt(input, path));
  const below = path.slice(at + 1);
  // A field's own value (a string or a seed), even one left null, is never shown.
  if (below.length >= 3 && below[1] === 'fields') return REDACTED;
  return redactSecrets(valueAt(input, path), below);
}

/** `value`, found at `below` under a `secrets` list, with every value in it redacted but an entry's match. */
function redactSecrets(value: unknown, below: PropertyKey[]): unknown {
  if (below.length === 0) return Array.isArray(value) ? value.map((entry) => redactEntry(entry)) : redactLeaves(value);
  if (below.length === 1) return redactEntry(value);
  return below.length === 2 && below[1] === 'match' ? value : redactLeaves(value);
}

function redactEntry(entry: unknown): unknown {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return redactLeaves(entry);
  return Object.fromEntries(Object.entries(entry).map(([k, v]) => [k, k === 'match' && typeof v === 'string' ? v : redactLeaves(v)]));
}

/** The same shape with every string, number and boolean replaced; null and undefined kept (they say a field is missing). */
function redactLeaves(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (Array.isArray(value)) return value.map(redactLeaves);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactLeaves(v)]));
  return REDACTED;
}

/** A value that holds a `secrets` list somewhere inside (a whole body, a whole task) with that list redacted. */
function withSecretsRedacted(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(withSecretsRedacted);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'secrets' ? redactSecrets(v, []) : withSecretsRedacted(v)]));
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
