import { z } from 'zod';
import { taskParamsSchema } from './task.schema';

export const newTaskMessageSchema = z
  .object({ actionType: z.literal('newTask'), newState: z.literal('start') })
  .and(taskParamsSchema);

export const stateMessageSchema = z.object({
  actionType: z.literal('state'),
  newState: z.enum(['pause', 'resume', 'stop', 'terminate']),
});

export const guardrailMessageSchema = z.object({
  actionType: z.literal('guardrail'),
  prompt: z.string().min(1).max(10_000).describe('The information the human provides'),
  newState: z.literal('resume'),
});

export const MESSAGE_TYPES = ['newTask', 'state', 'interaction', 'guardrail'] as const;
export const messageEnvelopeSchema = z.object({ actionType: z.enum(MESSAGE_TYPES) });

export const sendMessageSchema = z.object({
  sessionId: z.string().min(1),
  message: z.record(z.string(), z.unknown()),
});
