import { z } from 'zod';
import { taskParamsSchema } from './task.schema';

const sessionFields = {
  environmentId: z.string().nullable().default(null).describe('Environment to attach (its browser profile and files)'),
  profileId: z.string().nullable().default(null).describe('Browser profile to run on (instead of an environment)'),
  policyId: z.string().min(1).max(128).nullable().default(null).describe('Automation policy (one of the caller\'s policies); every agent action is checked against it'),
  proxy: z.record(z.string(), z.unknown()).nullable().default(null).describe('Proxy object'),
  mode: z.enum(['default']).default('default'),
  reachOutMode: z.enum(['off', 'guardrail_only', 'full']).default('guardrail_only'),
};

export const startSessionSchema = z.object({ ...sessionFields, task: taskParamsSchema.optional() });
export const runTaskSchema = z.object({ ...sessionFields, task: taskParamsSchema });

export type StartSessionBody = z.infer<typeof startSessionSchema>;
