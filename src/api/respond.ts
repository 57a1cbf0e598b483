import type { Response } from 'express';
import type { z } from 'zod';

/**
 * Sends a JSON answer typed by its response schema (the one the OpenAPI document gives for
 * the route), so a handler cannot answer what the document does not describe without a
 * type error. The schema only types the body; the end-to-end tests check the answers
 * against the document at run time.
 */
export function send<S extends z.ZodType>(res: Response, schema: S, status: number, body: z.output<S>): void {
  void schema;
  res.status(status).json(body);
}
