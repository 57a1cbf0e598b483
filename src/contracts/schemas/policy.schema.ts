/**
 * Requests of `/policies`: create (name required) and update (any subset; a list given
 * replaces the stored one). Problems are 400s in the contract's codes:
 * MISSING_REQUIRED_FIELD with `details.field`, INVALID_PARAMETER with `details.parameter`.
 */
import { z } from 'zod';
import { BUILT_IN_DETECTORS, customPatternProblem, isBuiltInDetector, MAX_CUSTOM_PATTERN, type SensitiveDataSpec } from '../detectors';
import { HOST_PATTERN_SOURCE, MAX_HOST_PATTERN, parseHostPattern } from '../host-patterns';
import { POLICY_ACTION_TYPES } from '../actions';
import type { PolicyRule } from '../policy-rules';
import { MAX_URL_PATTERN } from '../url-patterns';
import { InvalidParameterError, InvalidParamsError, MissingFieldError } from '../errors';
import type { PolicyFields } from '../policy-rules';
import { parseRequest } from './validation';

export const POLICY_LIMITS = {
  name: 100,
  description: 500,
  llmRole: 4000,
  domains: 200,
  keywords: 100,
  keyword: 200,
  urlPatterns: 50,
  sensitiveData: 20,
} as const;

const DETECTOR_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

const sensitiveDataItem = z.unknown().meta({
  anyOf: [
    { type: 'string', enum: [...BUILT_IN_DETECTORS] },
    {
      type: 'object',
      required: ['name', 'pattern'],
      additionalProperties: false,
      properties: { name: { type: 'string', pattern: DETECTOR_NAME.source }, pattern: { type: 'string', minLength: 1, maxLength: MAX_CUSTOM_PATTERN, description: 'An RE2 regular expression' } },
    },
  ],
}).superRefine((item, ctx) => {
  if (typeof item === 'string') {
    if (!isBuiltInDetector(item)) {
      ctx.addIssue({ code: 'custom', message: `must be one of ${BUILT_IN_DETECTORS.join(', ')}, or a custom pattern written as {"name": "...", "pattern": "<RE2 regular expression>"}` });
    }
    return;
  }
  if (!item || typeof item !== 'object' || Array.isArray(item)) {
    ctx.addIssue({ code: 'custom', message: `must be a detector name (${BUILT_IN_DETECTORS.join(', ')}) or {"name": "...", "pattern": "..."}` });
    return;
  }
  const { name, pattern, ...rest } = item as Record<string, unknown>;
  if (Object.keys(rest).length) ctx.addIssue({ code: 'custom', message: `has unknown fields: ${Object.keys(rest).join(', ')} (a custom pattern has name and pattern)` });
  else if (typeof name !== 'string' || !DETECTOR_NAME.test(name)) ctx.addIssue({ code: 'custom', path: ['name'], message: 'must be a name of letters, digits, _ or - (at most 64, starting with a letter)' });
  else if (typeof pattern !== 'string') ctx.addIssue({ code: 'custom', path: ['pattern'], message: 'must be a string: an RE2 regular expression' });
  else {
    const problem = customPatternProblem(pattern);
    if (problem) ctx.addIssue({ code: 'custom', path: ['pattern'], message: problem });
  }
});

const ruleSchema = z
  .object({
    effect: z.enum(['allow', 'block', 'approve']).describe('What happens to an action the rule covers'),
    actionTypes: z.array(z.enum(POLICY_ACTION_TYPES)).max(POLICY_ACTION_TYPES.length).optional().describe('Actions the rule covers (all when absent)'),
    keywords: z.array(z.string().regex(/\S/, 'must not be blank').trim().min(1).max(POLICY_LIMITS.keyword)).max(POLICY_LIMITS.keywords).optional().describe('Words in the element\'s text or the typed text (case-insensitive)'),
    urlPatterns: z.array(z.string().regex(/\S/, 'must not be blank').trim().min(1).max(MAX_URL_PATTERN)).max(POLICY_LIMITS.urlPatterns).optional().describe('Page or target URLs, * as wildcard'),
    sensitiveData: z.array(sensitiveDataItem).max(POLICY_LIMITS.sensitiveData).optional().describe('Detectors run on what the action types or submits'),
  })
  .strict();

const domainRulesSchema = z
  .object({
    mode: z.enum(['allow_all', 'allowlist', 'blocklist']).describe('allow_all, allowlist (only these domains) or blocklist (all but these)'),
    domains: z
      .array(
        z.string().superRefine((d, ctx) => {
          const parsed = parseHostPattern(d);
          if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
        }).meta({ pattern: `^\\s*${HOST_PATTERN_SOURCE}\\s*$`, maxLength: MAX_HOST_PATTERN }),
      )
      .max(POLICY_LIMITS.domains)
      .default([])
      .describe('example.com (that host) or *.example.com (the domain and its subdomains), optionally with :port'),
  })
  .strict()
  .meta({ if: { required: ['mode'], properties: { mode: { enum: ['allowlist', 'blocklist'] } } }, then: { required: ['domains'], properties: { domains: { minItems: 1 } } } })
  .superRefine((r, ctx) => {
    if (r.mode !== 'allow_all' && r.domains.length === 0) ctx.addIssue({ code: 'custom', path: ['domains'], message: `must list at least one domain when mode is ${r.mode}` });
  });

const fieldsSchema = (maxRules: number) =>
  z
    .object({
      name: z.string().max(POLICY_LIMITS.name).regex(/\S/, 'must not be blank').trim().describe('Name of the policy, not blank'),
      description: z.string().trim().max(POLICY_LIMITS.description).nullish().describe('Free text'),
      llmRole: z.string().trim().max(POLICY_LIMITS.llmRole).nullish().describe('Instructions added to the agent\'s system prompt'),
      domainRules: domainRulesSchema.describe('Where the browser may go'),
      rules: z.array(ruleSchema).max(maxRules).describe('Checked before every action; block > approve > allow'),
    })
    .strict();

/** The body of POST /policies as the API document shows it (the rule limit is a setting). */
export const policyRequestSchema = fieldsSchema(50);

const normaliseRule = (r: z.infer<ReturnType<typeof fieldsSchema>>['rules'][number]): PolicyRule => ({
  effect: r.effect,
  ...(r.actionTypes?.length ? { actionTypes: [...new Set(r.actionTypes)] } : {}),
  ...(r.keywords?.length ? { keywords: r.keywords } : {}),
  ...(r.urlPatterns?.length ? { urlPatterns: r.urlPatterns } : {}),
  ...(r.sensitiveData?.length ? { sensitiveData: r.sensitiveData as SensitiveDataSpec[] } : {}),
});

/** The body as an object: none is `{}`; anything but an object (an array) is 400. */
const asObject = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new InvalidParamsError('The request body must be a JSON object');
  return body as Record<string, unknown>;
};

function parse(body: Record<string, unknown>, maxRules: number) {
  try {
    return parseRequest(fieldsSchema(maxRules).partial(), body);
  } catch (err) {
    // A list over its limit says how many are allowed.
    if (err instanceof InvalidParameterError && String(err.details?.parameter) === 'rules' && Array.isArray(body.rules) && body.rules.length > maxRules) {
      throw new InvalidParameterError('rules', body.rules.length, `A policy may have at most ${maxRules} rules`, { max: maxRules });
    }
    throw err;
  }
}

/** `POST /policies`. */
export function parseCreatePolicy(raw: unknown, maxRules: number): PolicyFields {
  const body = asObject(raw);
  if (body.name === undefined || body.name === null || (typeof body.name === 'string' && !body.name.trim())) throw new MissingFieldError('name', 'name is required');
  const p = parse(body, maxRules);
  return {
    name: p.name!,
    description: p.description ?? '',
    llmRole: p.llmRole || null,
    domainRules: p.domainRules ?? { mode: 'allow_all', domains: [] },
    rules: (p.rules ?? []).map(normaliseRule),
  };
}

/** `PUT /policies/:id`: only the fields given change. */
export function parseUpdatePolicy(raw: unknown, maxRules: number): Partial<PolicyFields> {
  const body = asObject(raw);
  if ('name' in body && (body.name === null || (typeof body.name === 'string' && !body.name.trim()))) throw new MissingFieldError('name', 'name must not be empty');
  const p = parse(body, maxRules);
  const out: Partial<PolicyFields> = {};
  if (p.name !== undefined) out.name = p.name;
  if (p.description !== undefined) out.description = p.description ?? '';
  if (p.llmRole !== undefined) out.llmRole = p.llmRole || null;
  if (p.domainRules !== undefined) out.domainRules = p.domainRules;
  if (p.rules !== undefined) out.rules = p.rules.map(normaliseRule);
  return out;
}
