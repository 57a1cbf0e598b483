import { z } from 'zod';
import { csvColumnsProblem, outputSchemaLimitProblem, outputSchemaProblem } from '../../agent/structured-output';
import { InvalidParameterError } from '../../errors';

export const TASK_LIMITS = {
  maxDuration: { min: 1000, max: 300_000, default: 300_000 },
  maxInputTokens: { min: 1000, max: 100_000, default: 100_000 },
  maxOutputTokens: { min: 100, max: 100_000, default: 100_000 },
} as const;

/** An absolute http or https URL. */
export const httpUrl = z.string().refine((v) => {
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
}, 'must be an http(s) URL');

const bounded = (name: keyof typeof TASK_LIMITS) =>
  z
    .number()
    .int()
    .min(TASK_LIMITS[name].min)
    .max(TASK_LIMITS[name].max)
    .default(TASK_LIMITS[name].default)
    .describe(`${name}, ${TASK_LIMITS[name].min}..${TASK_LIMITS[name].max}`);

export const secretEntrySchema = z.object({
  match: z.string().min(1).describe('Domain pattern (e.g. *.example.com) or "all"'),
  fields: z.record(z.string(), z.string()).describe('Credential fields such as email, password, apiKey'),
});

export const webhookSchema = z.object({
  name: z.string().min(1).describe('Identifier of the webhook'),
  url: httpUrl.describe('Receiving address (http or https)'),
  auth: z.string().optional().describe('Value of the Authorization header of the delivery'),
  submittedData: z.enum(['ai_response', 'full_response', 'just_ping']).describe('What the delivery carries'),
});

/** Task parameters: inside `task` of start-session and run-task, or inside a newTask message. */
export const taskParamsSchema = z
  .object({
    prompt: z.string().max(50_000).default('').describe('What the agent should do'),
    startingUrl: httpUrl.nullable().default(null).describe('Page to open first'),
    maxDuration: bounded('maxDuration'),
    maxInputTokens: bounded('maxInputTokens'),
    maxOutputTokens: bounded('maxOutputTokens'),
    terminateOnCompletion: z.boolean().default(false).describe('Close the session after the task'),
    outputType: z.enum(['text', 'structured_json', 'structured_csv']).default('text'),
    outputSchema: z.union([z.record(z.string(), z.unknown()), z.array(z.string())]).optional().describe('JSON Schema (structured_json) or column names (structured_csv)'),
    secrets: z.array(secretEntrySchema).max(50).default([]),
    files: z.array(z.string().min(1)).max(20).default([]).describe('fileIds from POST /files/upload'),
    webhook: webhookSchema.optional(),
  })
  .superRefine((t, ctx) => {
    if (t.outputType === 'structured_json' && (!t.outputSchema || Array.isArray(t.outputSchema))) {
      ctx.addIssue({ code: 'custom', path: ['outputSchema'], message: 'outputSchema must be a JSON Schema object when outputType is structured_json' });
    }
    if (t.outputType === 'structured_csv' && (!Array.isArray(t.outputSchema) || t.outputSchema.length === 0)) {
      ctx.addIssue({ code: 'custom', path: ['outputSchema'], message: 'outputSchema must be a non-empty array of column names when outputType is structured_csv' });
    }
    const problem =
      t.outputType === 'structured_json' && t.outputSchema && !Array.isArray(t.outputSchema)
        ? outputSchemaLimitProblem(t.outputSchema)
        : t.outputType === 'structured_csv' && Array.isArray(t.outputSchema) && t.outputSchema.length
          ? csvColumnsProblem(t.outputSchema)
          : null;
    // The schema itself is not echoed back in the error (it may be 64 KB).
    if (problem) ctx.addIssue({ code: 'custom', path: ['outputSchema'], message: problem, params: { value: null } });
  });

/**
 * The rest of the `outputSchema` check, after the request parsed: the JSON Schema is
 * compiled on a schema thread (never on the API's event loop), so a schema that cannot be
 * enforced is a 400 at submission. `prefix` is where the task sits in the request
 * (`task.` in start-session and run-task, `message.` in a newTask message).
 */
export async function assertOutputSchemaUsable(task: Pick<TaskParamsInput, 'outputType' | 'outputSchema'> | undefined, prefix: string): Promise<void> {
  if (task?.outputType !== 'structured_json' || !task.outputSchema || Array.isArray(task.outputSchema)) return;
  const problem = await outputSchemaProblem(task.outputSchema);
  if (problem) throw new InvalidParameterError(`${prefix}outputSchema`, null, problem);
}

export type TaskParamsInput = z.infer<typeof taskParamsSchema>;
