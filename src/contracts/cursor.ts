/**
 * Page cursors of the run history and the file list: the sort key (createdAt, _id) of the
 * last item of a page, newest first, written `<createdAt in ms>.<id>`. Clients pass them back
 * untouched; anything not of that form is a 400. Any key of that form is a valid place to
 * continue from (the next page is what sorts after it), so the form is all there is to check.
 */
import { z } from 'zod';
import { InvalidParameterError } from './errors';

export interface CursorKey {
  createdAt: Date;
  id: string;
}

export const PAGE_LIMITS = { min: 1, max: 100, default: 20 } as const;

/** What a cursor looks like: milliseconds since the epoch (at most 15 digits), a dot, the id. */
export const CURSOR_PATTERN = /^\d{1,15}\.[A-Za-z0-9_-]{1,128}$/;

export function encodeCursor(key: CursorKey): string {
  return `${key.createdAt.getTime()}.${key.id}`;
}

export function decodeCursor(cursor: string): CursorKey {
  if (!CURSOR_PATTERN.test(cursor)) throw new InvalidParameterError('cursor', cursor, 'cursor is not valid; pass the nextCursor of the previous page');
  const dot = cursor.indexOf('.');
  return { createdAt: new Date(Number(cursor.slice(0, dot))), id: cursor.slice(dot + 1) };
}

/** `?limit=&cursor=` of a paged list, as the OpenAPI document shows them (parseLimit and decodeCursor read them). */
export const pageQuerySchema = z.object({
  limit: z.number().int().min(PAGE_LIMITS.min).max(PAGE_LIMITS.max).optional().describe(`Items per page, ${PAGE_LIMITS.min}..${PAGE_LIMITS.max}, default ${PAGE_LIMITS.default}`),
  cursor: z
    .string()
    .regex(new RegExp(`^$|${CURSOR_PATTERN.source}`))
    .optional()
    .describe('nextCursor of the previous page (empty or absent: the first page)'),
});

/** `?limit=` as the contract bounds it: 1..100, default 20. */
export function parseLimit(raw: unknown): number {
  if (raw === undefined || raw === '') return PAGE_LIMITS.default;
  const value = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < PAGE_LIMITS.min || value > PAGE_LIMITS.max) {
    throw new InvalidParameterError('limit', raw, `limit must be an integer between ${PAGE_LIMITS.min} and ${PAGE_LIMITS.max}`, { min: PAGE_LIMITS.min, max: PAGE_LIMITS.max });
  }
  return value;
}

/** The filter of the items after `key` in (createdAt desc, _id desc) order. */
export function afterCursor(key: CursorKey): Record<string, unknown> {
  return { $or: [{ createdAt: { $lt: key.createdAt } }, { createdAt: key.createdAt, _id: { $lt: key.id } }] };
}
