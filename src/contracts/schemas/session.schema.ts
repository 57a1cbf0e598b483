import { z } from 'zod';
import { fileIdsSchema, orDefault, taskParamsSchema, TASK_FILES_MAX, type TaskParamsInput } from './task.schema';
import { parseRequest } from './validation';
import { privateAddressProblem } from '../submitted-urls';
import { InvalidParameterError, MissingFieldError } from '../errors';

/** The ISO 3166-1 alpha-2 codes the platform knows (a name other than the code itself). */
const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const COUNTRY_CODES = [...LETTERS].flatMap((a) => [...LETTERS].map((b) => a + b)).filter((code) => regionNames.of(code) !== code);
/** One of those codes in either case, or `random`: one pattern, so the OpenAPI document says exactly what is taken. */
const COUNTRY_PATTERN = new RegExp(`^(random|${COUNTRY_CODES.map((code) => [...code].map((c) => `[${c}${c.toLowerCase()}]`).join('')).join('|')})$`);
const country = z.string().regex(COUNTRY_PATTERN, 'must be an ISO 3166-1 alpha-2 country code or "random"').describe('ISO 3166-1 alpha-2 country code (either case), or "random"');
// null on an optional field of the proxy is the field left out (nullish: a pipe here would
// hide the proxy's default from the OpenAPI document).
const level = z.enum(['system', 'chrome']).nullish().describe('system (through the service\'s relay) or chrome');

const managedProxy = z
  .object({ source: z.literal('Service'), country, level })
  .strict()
  .describe('A proxy of the service\'s pool (metered); a country the pool has no proxy for is 400');
const customProxy = z
  .object({
    source: z.literal('custom'),
    type: z.enum(['http', 'socks']),
    host: z
      .string()
      .min(1)
      .max(253)
      .regex(/^(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:]*:[0-9a-fA-F:.]+|[A-Za-z0-9.-]+)$/, 'must be a host name or an IP address'),
    port: z
      .string()
      .regex(/^\d{1,5}$/, 'must be a port number given as a string')
      .refine((v) => Number(v) >= 1 && Number(v) <= 65535, 'must be between 1 and 65535')
      // Both checks as one pattern, for the OpenAPI document: 1..65535 in at most 5 digits.
      .meta({ pattern: '^(?=\\d{1,5}$)0*(6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3})$' }),
    username: z.string().max(256).nullish(),
    password: z.string().max(256).nullish(),
    level,
  })
  .strict()
  .superRefine((p, ctx) => {
    // A private address literal the operator did not open is refused now; names are checked when used.
    const host = p.host.includes(':') && !p.host.startsWith('[') ? `[${p.host}]` : p.host;
    const problem = privateAddressProblem(`http://${host}:${p.port}/`);
    if (problem) ctx.addIssue({ code: 'custom', path: ['host'], message: `must not be a private address: ${problem}` });
  })
  .describe('Your own proxy');
export const proxySchema = z.discriminatedUnion('source', [managedProxy, customProxy]);
export type ProxyInput = z.infer<typeof proxySchema>;

/**
 * The session's fields (start-session and run-task). Null on any of them is its default;
 * an empty id is refused (400 MISSING_REQUIRED_FIELD `<field> must not be empty`), never
 * taken for "none".
 */
const sessionFields = {
  environmentId: z.string().min(1).max(128).nullable().default(null).describe('Environment to attach (its browser profile and files)'),
  profileId: z.string().min(1).max(128).nullable().default(null).describe('Browser profile to run on (instead of an environment)'),
  policyId: z.string().min(1).max(128).nullable().default(null).describe('Automation policy (one of the caller\'s policies); every agent action is checked against it'),
  proxy: proxySchema.nullable().default(null).describe('Proxy object: every task of the session browses through it'),
  mode: orDefault(z.enum(['default']).default('default')),
  reachOutMode: orDefault(z.enum(['off', 'guardrail_only', 'full']).default('guardrail_only')).describe('Given other than off, it needs environmentId of an environment with a chat connection (400 otherwise); left out, guardrail_only applies silently'),
};

/**
 * SessionsService.start's rules, for the OpenAPI document: an environment or a profile, not
 * both; a reachOutMode given other than off needs an environment (with a chat connection,
 * which only the service can check: 400 otherwise).
 */
const SESSION_RULES = {
  allOf: [
    { not: { required: ['environmentId', 'profileId'], properties: { environmentId: { type: 'string' }, profileId: { type: 'string' } } } },
    { if: { required: ['reachOutMode'], properties: { reachOutMode: { enum: ['guardrail_only', 'full'] } } }, then: { required: ['environmentId'], properties: { environmentId: { type: 'string' } } } },
  ],
};

export const startSessionSchema = z.object({ ...sessionFields, task: orDefault(taskParamsSchema.optional()) }).meta(SESSION_RULES);
export const runTaskSchema = z.object({
  ...sessionFields,
  task: taskParamsSchema,
  files: fileIdsSchema.nullish().describe('fileIds from POST /files/upload, as the contract\'s upload section places them for run-task: added to task.files (without duplicates; at most 20 in all)'),
}).meta(SESSION_RULES);

export type StartSessionBody = z.infer<typeof startSessionSchema>;
export type RunTaskBody = Omit<z.infer<typeof runTaskSchema>, 'files'>;

/**
 * POST /start/run-task. `task` is required (its `prompt`: 400 MISSING_REQUIRED_FIELD
 * `task.prompt` when there is no task at all). The contract gives run-task's fileIds both
 * inside `task` and at the top level (`files` "in the body for run-task"): both are taken,
 * merged without duplicates (task.files first), with the limit of task.files on the result.
 */
export function parseRunTask(raw: Record<string, unknown>): RunTaskBody {
  if (!raw.task || typeof raw.task !== 'object') throw new MissingFieldError('task.prompt');
  const { files, ...body } = parseRequest(runTaskSchema, raw);
  if (!files?.length) return body;
  const merged: TaskParamsInput['files'] = [...new Set([...body.task.files, ...files])];
  if (merged.length > TASK_FILES_MAX) {
    throw new InvalidParameterError('files', merged.length, `files and task.files together may hold at most ${TASK_FILES_MAX} fileIds (got ${merged.length} different ones)`, { max: TASK_FILES_MAX });
  }
  return { ...body, task: { ...body.task, files: merged } };
}

/** An integer query parameter: digits only (no sign, point, exponent or spaces), then its bounds. */
export const queryInt = (min: number, max: number) => z.preprocess((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v), z.number().int().min(min).max(max));

/** GET /start/sessions/:sessionId/events: the events after `after` (a seq), at most `limit`. */
export const sessionEventsQuerySchema = z.object({
  after: queryInt(0, Number.MAX_SAFE_INTEGER).default(0).describe('Last seq the caller has; the events after it are returned'),
  limit: queryInt(1, 1000).default(200).describe('Most events returned, 1..1000'),
});
