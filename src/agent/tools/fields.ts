import { z } from 'zod';

/** The argument every element action takes. */
export const elementIndex = () => z.number().int().min(1).describe('The [index] of the element in the latest observation');
