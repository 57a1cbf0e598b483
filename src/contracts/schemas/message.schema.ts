import { z } from 'zod';
import { orDefault, taskParamsSchema } from './task.schema';

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

/** The viewport is 1024 x 600 below a 155 px offset: page point = (x, y - 155). */
export const COORDINATES = { x: { min: 0, max: 1024 }, y: { min: 155, max: 755 } } as const;
export const Y_OFFSET = 155;
export const NAMED_KEYS = ['Enter', 'Escape', 'Tab', 'Backspace', 'Delete', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'PageUp', 'PageDown', 'Home', 'End'] as const;

/** Longest TYPE text, and longest with humanLike (typed key by key with pauses). */
export const TYPE_MAX_CHARS = 10_000;
export const HUMAN_TYPE_MAX_CHARS = 2000;
/** Longest time human-like typing may take in all (well inside the interaction's 60 s activity timeout). */
export const HUMAN_TYPE_MAX_MS = 30_000;

/**
 * The pauses after each key of human-like typing: 40-150 ms like a person, scaled down
 * when they would add up to more than HUMAN_TYPE_MAX_MS.
 */
export function humanTypingDelays(keys: number, random: () => number = Math.random, budgetMs = HUMAN_TYPE_MAX_MS): number[] {
  const delays = Array.from({ length: keys }, () => 40 + random() * 110);
  const total = delays.reduce((a, b) => a + b, 0);
  const scale = total > budgetMs ? budgetMs / total : 1;
  return delays.map((d) => d * scale);
}

const x = z.number().min(COORDINATES.x.min).max(COORDINATES.x.max).describe('0..1024');
const y = z.number().min(COORDINATES.y.min).max(COORDINATES.y.max).describe('155..755 (155 px offset above the page)');

export const interactionActionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('takeOverControl') }),
  z.object({ type: z.literal('releaseControl') }),
  z.object({ type: z.literal('CLICK'), x, y }),
  z.object({ type: z.literal('DOUBLE_CLICK'), x, y }),
  z
    .object({ type: z.literal('TYPE'), text: z.string().min(1).max(TYPE_MAX_CHARS), humanLike: orDefault(z.boolean().default(false)) })
    .superRefine((a, ctx) => {
      const length = [...a.text].length;
      // The typed text is not echoed back (it may be a password).
      if (a.humanLike && length > HUMAN_TYPE_MAX_CHARS) {
        ctx.addIssue({ code: 'custom', path: ['text'], message: `human-like typing takes at most ${HUMAN_TYPE_MAX_CHARS} characters (got ${length}); send longer text without humanLike`, params: { value: null } });
      }
    }),
  z.object({
    type: z.literal('KEY_PRESS'),
    key: z
      .string()
      .refine((k) => (NAMED_KEYS as readonly string[]).includes(k) || [...k].length === 1, {
        message: `key must be one of ${NAMED_KEYS.join(', ')} or a single character`,
      })
      .meta({ anyOf: [{ enum: [...NAMED_KEYS] }, { minLength: 1, maxLength: 1 }] }),
  }),
]);
export type InteractionAction = z.infer<typeof interactionActionSchema>;

export const interactionMessageSchema = z.object({ actionType: z.literal('interaction'), action: interactionActionSchema });

export const MESSAGE_TYPES = ['newTask', 'state', 'interaction', 'guardrail'] as const;
export const messageEnvelopeSchema = z.object({ actionType: z.enum(MESSAGE_TYPES) });

export const sendMessageSchema = z.object({
  sessionId: z.string().min(1),
  message: z.record(z.string(), z.unknown()),
});
