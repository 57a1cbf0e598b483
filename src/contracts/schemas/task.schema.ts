import { z } from 'zod';
import { MAX_SECRET_MATCH, parseSecretMatch } from '../secret-match';
import { csvColumnsProblem, outputSchemaLimitProblem } from '../output-schema';
import { privateAddressProblem } from '../submitted-urls';
import { HOST_PATTERN_SOURCE, HTTP_URL_PATTERN_SOURCE } from '../host-patterns';

/** A secret's name, as `<secret>name</secret>` placeholders use it. */
export const SECRET_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

export const TASK_LIMITS = {
  maxDuration: { min: 1000, max: 300_000, default: 300_000 },
  maxInputTokens: { min: 1000, max: 100_000, default: 100_000 },
  maxOutputTokens: { min: 100, max: 100_000, default: 100_000 },
} as const;

/** The largest dollar budget a task may be given (`maxCost`, USD). */
export const MAX_COST_USD = 10_000;

/** A task's dollar budget: positive USD, at most MAX_COST_USD (6 decimals are billed). */
export const maxCostSchema = z
  .number()
  .positive()
  .max(MAX_COST_USD)
  .describe(`Most USD the task's model calls may cost (checked before each call; the task ends with TASK_BUDGET_EXCEEDED before passing it), up to ${MAX_COST_USD}`);

/** Most checks of a task's `verify`, and the longest text of one. */
export const VERIFY_LIMITS = { checks: 10, chars: 1000 } as const;

const checkText = (what: string) => z.string().trim().min(1, `${what} must not be empty`).max(VERIFY_LIMITS.chars);

/** One check a task's result must pass before the task may complete. */
export const verifyCheckSchema = z.union([
  z.object({ urlMatches: checkText('urlMatches').max(500).describe('URL pattern the final page must match: * for any characters, case-insensitive; without * the URL contains it') }).strict(),
  z.object({ textVisible: checkText('textVisible').describe('Text the final page shows (letter case and spacing aside)') }).strict(),
  z.object({ elementVisible: checkText('elementVisible').max(200).describe('A visible element: `role "name"` (button "Log out") or a text it shows, its label or placeholder') }).strict(),
  z.object({ criteria: checkText('criteria').describe('A sentence a separate model call judges from the final page and the answer, with its reason') }).strict(),
]);

/** Most fileIds one task may take (`files` from POST /files/upload). */
export const TASK_FILES_MAX = 20;

/**
 * Null on an optional field is the field left out: its default applies. Generated clients
 * send null for the fields they leave out. A required field given null stays missing
 * (400 MISSING_REQUIRED_FIELD); an array item given null is 400 INVALID_PARAMETER.
 *
 * `orDefault` does it for one field (for objects other code picks fields from, and the
 * options of a discriminated union); `nullIsAbsent` for every optional field of an object,
 * dropping their null keys before the object is parsed.
 */
/**
 * Marks, for the OpenAPI document, a field (orDefault) or the optional fields of an object
 * (nullIsAbsent) that take null: the document's builder shows them as nullable.
 */
export const NULL_IS_DEFAULT = 'x-null-is-default';
export const NULL_IS_ABSENT = 'x-null-is-absent';

export const orDefault = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === null ? undefined : v), schema).meta({ [NULL_IS_DEFAULT]: true });

export function nullIsAbsent<T extends z.ZodObject>(schema: T, check?: (input: Record<string, unknown>, ctx: z.RefinementCtx) => void) {
  const optional = Object.keys(schema.shape).filter((k) => (schema.shape[k] as z.ZodType).safeParse(undefined).success);
  return z.preprocess((v, ctx) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
    const input = v as Record<string, unknown>;
    check?.(input, ctx);
    if (!optional.some((k) => input[k] === null)) return v;
    const out = { ...input };
    for (const k of optional) if (out[k] === null) delete out[k];
    return out;
  }, schema).meta({ [NULL_IS_ABSENT]: true });
}

/**
 * An absolute http or https URL whose host is not a private address literal (unless the
 * operator's PRIVATE_NETWORK_ALLOWLIST opens it). The OpenAPI document shows the form every
 * such URL with a host name has (HTTP_URL_PATTERN_SOURCE); URLs with an address or user
 * information are taken too.
 */
export const httpUrl = z.string().superRefine((v, ctx) => {
  let protocol = '';
  try {
    protocol = new URL(v).protocol;
  } catch {
    /* reported below */
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
    return;
  }
  const problem = privateAddressProblem(v);
  if (problem) ctx.addIssue({ code: 'custom', message: `must not point to a private address: ${problem}` });
}).meta({ pattern: HTTP_URL_PATTERN_SOURCE });

const bounded = (name: keyof typeof TASK_LIMITS) =>
  z
    .number()
    .int()
    .min(TASK_LIMITS[name].min)
    .max(TASK_LIMITS[name].max)
    .default(TASK_LIMITS[name].default)
    .describe(`${name}, ${TASK_LIMITS[name].min}..${TASK_LIMITS[name].max}`);

export const SECRET_LIMITS = { entries: 50, fields: 20, valueChars: 4096 } as const;

/** Base32 (RFC 4648) as authenticator apps show seeds: letters A-Z and digits 2-7, spaces or dashes between groups, padding. */
const BASE32_SEED = /^[A-Za-z2-7][A-Za-z2-7 -]*=*$/;

/**
 * A one-time-code field: the authenticator seed (RFC 6238 TOTP). Typing its placeholder types
 * the code valid at that moment, computed on the worker.
 */
export const totpSeedSchema = z
  .object({
    totp: z
      .string()
      .min(16, 'a TOTP seed has at least 16 base32 characters (80 bits)')
      .max(256)
      .regex(BASE32_SEED, 'must be the base32 seed (letters A-Z and digits 2-7) the site showed for authenticator apps')
      .describe('The base32 seed, as the site shows it for authenticator apps'),
    digits: z.union([z.literal(6), z.literal(7), z.literal(8)]).optional().describe('Digits of a code: 6 (default), 7 or 8'),
    period: z.number().int().min(15).max(120).optional().describe('Seconds a code is valid: 30 by default, 15..120'),
    algorithm: z.enum(['SHA1', 'SHA256', 'SHA512']).optional().describe('HMAC of the codes: SHA1 (default), SHA256 or SHA512'),
  })
  .strict()
  .describe('A one-time-code seed: <secret>name</secret> types the code valid at that moment');

const secretValueSchema = z.union([
  z.string().min(1, 'a secret value must not be empty').max(SECRET_LIMITS.valueChars, `a secret value may have at most ${SECRET_LIMITS.valueChars} characters`),
  totpSeedSchema,
]);

export const secretEntrySchema = z
  .object({
    match: z
      .string()
      .min(1)
      .superRefine((m, ctx) => {
        if (m.trim().toLowerCase() === 'all') return;
        const parsed = parseSecretMatch(m);
        if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: `${parsed}; or "all" for every site` });
      })
      .meta({ pattern: `^\\s*([Aa][Ll][Ll]|([Hh][Tt][Tt][Pp][Ss]?://)?${HOST_PATTERN_SOURCE}/?)\\s*$`, maxLength: MAX_SECRET_MATCH })
      .describe(
        'Where the values may be typed: a host (example.com), its subdomains too (*.example.com), optionally with a port (example.com:8443) and a scheme (http://example.com), or "all". Without a scheme only https (and http on loopback addresses); without a port only the default port',
      ),
    fields: z
      .record(z.string(), secretValueSchema)
      .superRefine((fields, ctx) => {
        const names = Object.keys(fields);
        if (!names.length) ctx.addIssue({ code: 'custom', message: 'must hold at least one field, e.g. {"password": "..."}' });
        if (names.length > SECRET_LIMITS.fields) ctx.addIssue({ code: 'custom', message: `may hold at most ${SECRET_LIMITS.fields} fields` });
        for (const name of names) {
          if (!SECRET_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'secret names are letters, digits, _, . or - (at most 64, starting with a letter); the agent writes <secret>name</secret>' });
        }
      })
      .meta({ propertyNames: { pattern: SECRET_NAME.source }, minProperties: 1, maxProperties: SECRET_LIMITS.fields })
      .describe('Credential fields such as email, password, apiKey (or a one-time-code seed: {"totp": "<base32>", "digits": 6, "period": 30}); the agent sees only their names'),
  })
  .strict();

export const webhookSchema = nullIsAbsent(
  z.object({
    name: z.string().min(1).describe('Identifier of the webhook'),
    url: httpUrl.describe('Receiving address (http or https)'),
    auth: z.string().optional().describe('Value of the Authorization header of the delivery'),
    submittedData: z.enum(['ai_response', 'full_response', 'just_ping']).describe('What the delivery carries'),
  }),
);

/** fileIds from POST /files/upload: `files` of a task (and the top-level `files` of run-task). */
export const fileIdsSchema = z.array(z.string().min(1)).max(TASK_FILES_MAX);

/** The task's fields without the cross-field checks (zod cannot pick from a refined object). */
export const taskParamsFields = z.object({
  prompt: z.string().max(50_000).default('').describe('What the agent should do'),
  startingUrl: httpUrl.nullable().default(null).describe('Page to open first'),
  maxDuration: bounded('maxDuration'),
  maxInputTokens: bounded('maxInputTokens'),
  maxOutputTokens: bounded('maxOutputTokens'),
  maxCost: maxCostSchema.optional(),
  terminateOnCompletion: z.boolean().default(false).describe('Close the session after the task'),
  outputType: z.enum(['text', 'structured_json', 'structured_csv']).default('text'),
  outputSchema: z.union([z.record(z.string(), z.unknown()), z.array(z.string())]).optional().describe('JSON Schema (structured_json) or column names (structured_csv)'),
  secrets: z.array(secretEntrySchema).max(SECRET_LIMITS.entries).default([]).describe('Values the agent may type but never sees'),
  files: fileIdsSchema.default([]).describe('fileIds from POST /files/upload'),
  webhook: webhookSchema.optional(),
  verify: z
    .array(verifyCheckSchema)
    .min(1)
    .max(VERIFY_LIMITS.checks)
    .optional()
    .describe(`Checks the result must pass before the task completes (at most ${VERIFY_LIMITS.checks}); the agent is told the failed ones and goes on, 3 times, then the task fails with TASK_NOT_VERIFIED`),
  replayOf: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe("One of the caller's completed tasks: its recorded steps are performed again without the model; the agent takes over where a step no longer fits the page"),
});

/** The task's fields with their cross-field checks (`outputSchema` against `outputType`). */
const checkedTaskParams = taskParamsFields.superRefine((t, ctx) => {
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
}).meta({
  // The task check of a prompt (src/sessions/task-checks.ts), as the document says it: a
  // prompt with a non-space character, or a replay.
  anyOf: [
    { required: ['prompt'], properties: { prompt: { type: 'string', pattern: '\\S' } } },
    { required: ['replayOf'], properties: { replayOf: { type: 'string' } } },
  ],
  // outputSchema as outputType needs it.
  allOf: [
    { if: { required: ['outputType'], properties: { outputType: { const: 'structured_json' } } }, then: { required: ['outputSchema'], properties: { outputSchema: { type: 'object' } } } },
    { if: { required: ['outputType'], properties: { outputType: { const: 'structured_csv' } } }, then: { required: ['outputSchema'], properties: { outputSchema: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', pattern: '\\S' } } } } },
  ],
});

/** Why a task's `proxy` is refused: the contract makes it a session field, not a task parameter. */
export const TASK_PROXY_REFUSAL = 'not a task parameter: proxy is a session-level field; give it at the top level of start-session or run-task, next to task (it applies to every task of the session)';

/**
 * Task parameters: inside `task` of start-session and run-task, or inside a newTask message.
 * Null on any of them is its default. A `proxy` among them is 400 INVALID_PARAMETER
 * (`task.proxy`, `message.proxy`) rather than dropped in silence; its value is not echoed
 * (it may carry a password).
 */
export const taskParamsSchema = nullIsAbsent(checkedTaskParams, (input, ctx) => {
  if (input.proxy !== undefined) ctx.addIssue({ code: 'custom', path: ['proxy'], message: TASK_PROXY_REFUSAL, params: { value: null }, input: input.proxy });
});


export type TaskParamsInput = z.infer<typeof taskParamsSchema>;
export type SecretEntryInput = z.infer<typeof secretEntrySchema>;
export type TotpSeed = z.infer<typeof totpSeedSchema>;
