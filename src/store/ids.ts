import { randomBytes } from 'node:crypto';

/** Random identifiers; session ids carry 128 bits because they work as a capability. */
export const newId = (prefix: string, bytes = 12): string => `${prefix}_${randomBytes(bytes).toString('hex')}`;
export const newSessionId = (): string => randomBytes(16).toString('hex');
export const newTaskId = (): string => newId('task', 12);
