import { z } from 'zod';

/** The argument every element action takes. */
export const elementIndex = () => z.number().int().min(1).describe('The [index] of the element in the latest observation');

/** The element index an action's arguments name, if any. */
export function indexOf(args: unknown): number | undefined {
  const index = (args as { index?: unknown } | undefined)?.index;
  return typeof index === 'number' ? index : undefined;
}
