/**
 * Requests of `/cron-jobs`: create (every field of the Trigger resource) and update (any
 * subset). The contract's messages are kept verbatim (`name is required`, `prompt is
 * required`, `Valid environmentId is required`, `webhook config is required when
 * deliveryMode includes webhook`); schedule problems are 400 INVALID_PARAMETER with
 * `details: {parameter, value}` and a message saying what is wrong.
 */
import { z } from 'zod';
import { outputSchemaLimitProblem } from '../output-schema';
import { InvalidParameterError, InvalidParamsError, MissingFieldError, ServiceError } from '../errors';
import type { CronJobFields, CronJobRecord, CronJobStatus } from '../cron-job-record';
import { RETRY_LIMITS, type RetryPolicyInput } from '../retry-policy';
import { assertTimezone, parseAt, SCHEDULE_FIELD_NAMES, SCHEDULE_TYPES, validateSchedule, type ScheduleFields } from '../schedule-spec';
import { httpUrl, maxCostSchema, webhookSchema } from './task.schema';
import { parseRequest } from './validation';

export const NAME_MAX = 200;
export const DESCRIPTION_MAX = 2000;
export const PROMPT_MAX = 50_000;
export const FAILURES_LIMITS = { min: 1, max: 100, default: 5 } as const;
const ENVIRONMENT_ID = /^[A-Za-z0-9_-]{1,128}$/;


const bounded = (limits: { min: number; max: number }, describe: string, int = true) => (int ? z.number().int() : z.number()).min(limits.min).max(limits.max).describe(describe);

export const retryPolicySchema = z
  .object({
    maximumAttempts: bounded(RETRY_LIMITS.maximumAttempts, 'Attempts of a run in all, 1..10').default(RETRY_LIMITS.maximumAttempts.default),
    initialIntervalMs: bounded(RETRY_LIMITS.initialIntervalMs, 'Wait before the second attempt, ms').default(RETRY_LIMITS.initialIntervalMs.default),
    backoffCoefficient: bounded(RETRY_LIMITS.backoffCoefficient, 'Each wait is the previous one times this', false).default(RETRY_LIMITS.backoffCoefficient.default),
    maximumIntervalMs: bounded(RETRY_LIMITS.maximumIntervalMs, 'Longest wait between attempts, ms').default(RETRY_LIMITS.maximumIntervalMs.default),
  })
  .describe('How a failed run is attempted again (Temporal retry policy of the run)');

/** Every field a user may set; create requires some of them (checked before this schema). */
const fieldsSchema = z.object({
  name: z.string().max(NAME_MAX).regex(/\S/).trim().describe('Name of the trigger, not blank'),
  description: z.string().max(DESCRIPTION_MAX).nullish().describe('Free text'),
  environmentId: z.string().describe('Environment the runs use (its browser profile and files)').meta({ pattern: `^\\s*${ENVIRONMENT_ID.source.slice(1, -1)}\\s*$` }),
  policyId: z.string().min(1).max(128).nullish().describe('Automation policy (one of the caller\'s policies) the runs are checked against'),
  scheduleType: z.enum(SCHEDULE_TYPES).describe('at (once), every (interval) or cron'),
  scheduleAt: z.unknown().optional().meta({ type: ['string', 'null'] }).describe('ISO 8601 date-time in the future, for at'),
  scheduleInterval: z.string().nullish().describe('<n>m, <n>h or <n>d, for every'),
  scheduleCron: z.string().max(200).nullish().describe('Five-field cron expression, for cron'),
  timezone: z.string().max(64).nullish().describe('IANA time zone of the cron expression; UTC by default'),
  // Not blank: the task's checks say so (INVALID_TASK_DETAILS); the document shows it as a pattern.
  prompt: z.string().max(PROMPT_MAX).meta({ pattern: '\\S' }).describe('What the agent does on each run, not blank'),
  startingUrl: httpUrl.nullish().describe('Page to open first'),
  outputType: z.enum(['text', 'structured']).describe('text (default) or structured (JSON matching outputSchema)'),
  outputSchema: z.record(z.string(), z.unknown()).nullish().describe('JSON Schema of the structured result'),
  deliveryMode: z.enum(['webhook', 'bot', 'both']).describe('Where results go; webhook by default'),
  webhook: webhookSchema.nullish(),
  retryPolicy: retryPolicySchema.nullish(),
  maxConsecutiveFailures: bounded(FAILURES_LIMITS, 'Failed runs in a row after which the trigger pauses itself').describe('1..100, default 5'),
  maxCost: maxCostSchema.nullish().describe("Most USD each run's model calls may cost (the run ends with TASK_BUDGET_EXCEEDED before passing it; 3 such runs in a row pause the trigger); null: no cap"),
  replay: z.boolean().describe('Each run replays the recording of the last successful run without the model (the agent takes over where a step no longer fits); false by default'),
  status: z.enum(['active', 'paused']).describe('active (default) or paused'),
});

/** Every field of a trigger, as the OpenAPI document shows them. */
export const cronJobFieldsSchema = fieldsSchema;

/**
 * What a create needs besides its required fields, as JSON Schema: the field of its schedule
 * type, a webhook when deliveryMode includes one, an outputSchema when outputType is
 * structured. (Whether an `at` time is in the future, a cron expression and a time zone
 * are valid is checked by the service, and said in their descriptions.)
 */
export const CRON_JOB_CONDITIONS = [
  { if: { required: ['scheduleType'], properties: { scheduleType: { const: 'at' } } }, then: { required: ['scheduleAt'], properties: { scheduleAt: { type: 'string' } } } },
  { if: { required: ['scheduleType'], properties: { scheduleType: { const: 'every' } } }, then: { required: ['scheduleInterval'], properties: { scheduleInterval: { type: 'string' } } } },
  { if: { required: ['scheduleType'], properties: { scheduleType: { const: 'cron' } } }, then: { required: ['scheduleCron'], properties: { scheduleCron: { type: 'string' } } } },
  { if: { anyOf: [{ not: { required: ['deliveryMode'] } }, { properties: { deliveryMode: { enum: ['webhook', 'both'] } } }] }, then: { required: ['webhook'], properties: { webhook: { type: 'object' } } } },
  { if: { required: ['outputType'], properties: { outputType: { const: 'structured' } } }, then: { required: ['outputSchema'], properties: { outputSchema: { type: 'object' } } } },
];
const updateSchema = fieldsSchema.partial();
type UpdateBody = z.infer<typeof updateSchema>;

/** Numeric fields whose 400 carries both bounds. */
const BOUNDS: Record<string, { min: number; max: number }> = {
  maxConsecutiveFailures: FAILURES_LIMITS,
  'retryPolicy.maximumAttempts': RETRY_LIMITS.maximumAttempts,
  'retryPolicy.initialIntervalMs': RETRY_LIMITS.initialIntervalMs,
  'retryPolicy.backoffCoefficient': RETRY_LIMITS.backoffCoefficient,
  'retryPolicy.maximumIntervalMs': RETRY_LIMITS.maximumIntervalMs,
};

function parseFields(body: Record<string, unknown>): UpdateBody {
  try {
    return parseRequest(updateSchema, body);
  } catch (err) {
    const parameter = err instanceof ServiceError ? String(err.details?.parameter ?? '') : '';
    const bounds = BOUNDS[parameter];
    if (err instanceof InvalidParameterError && bounds) {
      const integer = parameter !== 'retryPolicy.backoffCoefficient';
      throw new InvalidParameterError(parameter, err.details?.value, `${parameter} must be ${integer ? 'an integer ' : ''}between ${bounds.min} and ${bounds.max}`, { min: bounds.min, max: bounds.max });
    }
    throw err;
  }
}

const blank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && !v.trim());

/**
 * A required text field: absent (or null) is MISSING_REQUIRED_FIELD with the contract's
 * message. A blank name is too; a blank prompt is a task with nothing to do, which the
 * task's checks refuse (src/sessions/task-checks.ts) as on every door.
 */
function requireText(body: Record<string, unknown>, field: 'name' | 'prompt', message: string): void {
  const v = body[field];
  if (field === 'prompt' ? v === undefined || v === null : blank(v)) throw new MissingFieldError(field, message);
  if (typeof v !== 'string') throw new InvalidParameterError(field, v, `${field} must be a string`);
}

function checkEnvironmentId(body: Record<string, unknown>): void {
  const v = body.environmentId;
  if (blank(v)) throw new MissingFieldError('environmentId', 'Valid environmentId is required');
  if (typeof v !== 'string' || !ENVIRONMENT_ID.test(v.trim())) throw new InvalidParameterError('environmentId', v, 'Valid environmentId is required');
}

function checkOutput(outputType: string, outputSchema: unknown): void {
  if (outputType !== 'structured') return;
  if (outputSchema === undefined || outputSchema === null) throw new MissingFieldError('outputSchema', 'outputSchema is required when outputType is structured');
  // The cheap checks here; compiling is assertCronOutputSchemaUsable's, on a schema thread.
  const problem = outputSchemaLimitProblem(outputSchema);
  if (problem) throw new InvalidParameterError('outputSchema', null, problem);
}


function checkWebhook(deliveryMode: string, webhook: unknown): void {
  if ((deliveryMode === 'webhook' || deliveryMode === 'both') && !webhook) throw new MissingFieldError('webhook', 'webhook config is required when deliveryMode includes webhook');
}

/** The trigger's time zone after this request (checked: an offset-less scheduleAt is read in it). */
function timezoneOf(body: UpdateBody, base: ScheduleFields): string {
  const zone = body.timezone === undefined ? base.timezone : body.timezone?.trim() || 'UTC';
  assertTimezone(zone);
  return zone;
}

/** The stored schedule fields of a request: `at` parsed (and in the future), the others as given. */
function scheduleOf(body: UpdateBody, base: ScheduleFields, now: number): ScheduleFields {
  const type = body.scheduleType ?? base.scheduleType;
  const fields: ScheduleFields = {
    scheduleType: type,
    scheduleAt: body.scheduleAt === undefined ? base.scheduleAt : body.scheduleAt === null ? null : parseAt(body.scheduleAt, now, timezoneOf(body, base)),
    scheduleInterval: body.scheduleInterval === undefined ? base.scheduleInterval : (body.scheduleInterval?.trim() ?? null),
    scheduleCron: body.scheduleCron === undefined ? base.scheduleCron : (body.scheduleCron?.trim() ?? null),
    timezone: timezoneOf(body, base),
  };
  validateSchedule(fields, { now });
  // Only the fields of the type are kept, so the record says plainly when it runs.
  return {
    ...fields,
    scheduleAt: type === 'at' ? fields.scheduleAt : null,
    scheduleInterval: type === 'every' ? fields.scheduleInterval : null,
    scheduleCron: type === 'cron' ? fields.scheduleCron : null,
  };
}

/** The body as an object: none is `{}`; anything but an object (an array) is 400. */
const asObject = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new InvalidParamsError('The request body must be a JSON object');
  return body as Record<string, unknown>;
};

export interface CreateCronJob {
  fields: CronJobFields;
  status: CronJobStatus;
}

/** `POST /cron-jobs`. */
export function parseCreateCronJob(raw: unknown, now = Date.now()): CreateCronJob {
  const body = asObject(raw);
  requireText(body, 'name', 'name is required');
  requireText(body, 'prompt', 'prompt is required');
  checkEnvironmentId(body);
  if (blank(body.scheduleType)) throw new MissingFieldError('scheduleType', 'scheduleType is required (at, every or cron)');
  const parsed = parseFields(body);
  const schedule = scheduleOf(parsed, { scheduleType: parsed.scheduleType!, scheduleAt: null, scheduleInterval: null, scheduleCron: null, timezone: 'UTC' }, now);
  const outputType = parsed.outputType ?? 'text';
  checkOutput(outputType, parsed.outputSchema);
  const deliveryMode = parsed.deliveryMode ?? 'webhook';
  checkWebhook(deliveryMode, parsed.webhook);
  return {
    status: parsed.status ?? 'active',
    fields: {
      name: parsed.name!,
      description: parsed.description ?? '',
      environmentId: parsed.environmentId!.trim(),
      policyId: parsed.policyId ?? null,
      ...schedule,
      prompt: parsed.prompt!,
      startingUrl: parsed.startingUrl ?? null,
      outputType,
      outputSchema: outputType === 'structured' ? JSON.stringify(parsed.outputSchema) : null,
      deliveryMode,
      webhook: parsed.webhook ?? null,
      retryPolicy: (parsed.retryPolicy as RetryPolicyInput | null | undefined) ?? null,
      maxConsecutiveFailures: parsed.maxConsecutiveFailures ?? FAILURES_LIMITS.default,
      maxCost: parsed.maxCost ?? null,
      replay: parsed.replay ?? false,
    },
  };
}

export interface UpdateCronJob {
  /** Only the fields the request changes. */
  fields: Partial<CronJobFields>;
  /** A schedule field was given: the Temporal schedule is updated and nextRunAt recomputed. */
  scheduleChanged: boolean;
  /** The run workflow's retry policy changed: the schedule's action is updated. */
  retryChanged: boolean;
  /** A status change asked for (applied as pause or resume). */
  status?: CronJobStatus;
}

/** `PUT /cron-jobs/:id`: any subset of the fields, checked against the record they change. */
export function parseUpdateCronJob(raw: unknown, current: CronJobRecord, now = Date.now()): UpdateCronJob {
  const body = asObject(raw);
  if ('name' in body) requireText(body, 'name', 'name is required');
  if ('prompt' in body) requireText(body, 'prompt', 'prompt is required');
  if ('environmentId' in body) checkEnvironmentId(body);
  if ('scheduleType' in body && blank(body.scheduleType)) throw new MissingFieldError('scheduleType', 'scheduleType is required (at, every or cron)');
  const parsed = parseFields(body);
  const fields: Partial<CronJobFields> = {};
  if (parsed.name !== undefined) fields.name = parsed.name;
  if (parsed.description !== undefined) fields.description = parsed.description ?? '';
  if (parsed.environmentId !== undefined) fields.environmentId = parsed.environmentId.trim();
  if (parsed.policyId !== undefined) fields.policyId = parsed.policyId ?? null;
  if (parsed.prompt !== undefined) fields.prompt = parsed.prompt;
  if (parsed.startingUrl !== undefined) fields.startingUrl = parsed.startingUrl ?? null;
  if (parsed.maxConsecutiveFailures !== undefined) fields.maxConsecutiveFailures = parsed.maxConsecutiveFailures;
  if (parsed.replay !== undefined) fields.replay = parsed.replay;
  if (parsed.maxCost !== undefined) fields.maxCost = parsed.maxCost ?? null;

  const scheduleChanged = SCHEDULE_FIELD_NAMES.some((k) => k in body);
  if (scheduleChanged) Object.assign(fields, scheduleOf(parsed, current, now));

  const outputType = parsed.outputType ?? current.outputType;
  const schemaGiven = parsed.outputSchema !== undefined;
  if (parsed.outputType !== undefined || schemaGiven) {
    const schema = schemaGiven ? parsed.outputSchema : current.outputSchema ? JSON.parse(current.outputSchema) : null;
    checkOutput(outputType, schema);
    fields.outputType = outputType;
    fields.outputSchema = outputType === 'structured' ? JSON.stringify(schema) : null;
  }

  if (parsed.deliveryMode !== undefined) fields.deliveryMode = parsed.deliveryMode;
  if (parsed.webhook !== undefined) fields.webhook = parsed.webhook ?? null;
  checkWebhook(fields.deliveryMode ?? current.deliveryMode, fields.webhook !== undefined ? fields.webhook : current.webhook);

  const retryChanged = parsed.retryPolicy !== undefined;
  if (retryChanged) fields.retryPolicy = (parsed.retryPolicy as RetryPolicyInput | null) ?? null;
  return { fields, scheduleChanged, retryChanged, status: parsed.status };
}
