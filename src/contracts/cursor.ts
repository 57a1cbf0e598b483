/**
 * Opaque page cursors of the run history: the sort key (createdAt, _id) of the last item
 * of a page, newest first. Clients pass them back untouched; anything else is a 400.
 */
import { InvalidParameterError } from './errors';

export interface CursorKey {
  createdAt: Date;
  id: string;
}

export const PAGE_LIMITS = { min: 1, max: 100, default: 20 } as const;

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.createdAt.getTime(), key.id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): CursorKey {
  const bad = () => new InvalidParameterError('cursor', cursor, 'cursor is not valid; pass the nextCursor of the previous page');
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Number.isSafeInteger(parsed[0]) || typeof parsed[1] !== 'string' || !parsed[1]) throw bad();
  return { createdAt: new Date(parsed[0] as number), id: parsed[1] };
}

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
