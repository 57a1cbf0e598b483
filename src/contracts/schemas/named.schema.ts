/** `{name, description?}` of a created environment or profile. */
import { z } from 'zod';
import { MissingFieldError } from '../errors';
import { parseRequest } from './validation';

export const NAME_MAX = 100;
export const DESCRIPTION_MAX = 500;

/**
 * The lengths are those of the text as sent; surrounding spaces are then dropped. A name
 * needs a character other than a space.
 */
export const namedRequestSchema = z
  .object({
    name: z.string().max(NAME_MAX).regex(/\S/, 'must not be blank').trim().describe(`Name, at most ${NAME_MAX} characters, not blank`),
    description: z.string().max(DESCRIPTION_MAX).trim().nullish().describe(`Free text, at most ${DESCRIPTION_MAX} characters`),
  })
  .describe('Name and description of an environment or profile');

/** A missing or blank name is `<what> name is required`, as the contract words it. */
export function parseNamed(body: unknown, what: 'Environment' | 'Profile'): { name: string; description: string } {
  const raw = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (raw.name === undefined || raw.name === null || (typeof raw.name === 'string' && !raw.name.trim())) throw new MissingFieldError('name', `${what} name is required`);
  const parsed = parseRequest(namedRequestSchema, raw);
  return { name: parsed.name, description: parsed.description ?? '' };
}
