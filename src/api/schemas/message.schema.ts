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

/** The viewport is 1024 x 600 below a 155 px offset: page point = (x, y - 155). */
export const COORDINATES = { x: { min: 0, max: 1024 }, y: { min: 155, max: 755 } } as const;
export const Y_OFFSET = 155;
export const NAMED_KEYS = ['Enter', 'Escape', 'Tab', 'Backspace', 'Delete', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'PageUp', 'PageDown', 'Home', 'End'] as const;

const x = z.number().min(COORDINATES.x.min).max(COORDINATES.x.max).describe('0..1024');
const y = z.number().min(COORDINATES.y.min).max(COORDINATES.y.max).describe('155..755 (155 px offset above the page)');

export const interactionActionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('takeOverControl') }),
  z.object({ type: z.literal('releaseControl') }),
  z.object({ type: z.literal('CLICK'), x, y }),
  z.object({ type: z.literal('DOUBLE_CLICK'), x, y }),
  z.object({ type: z.literal('TYPE'), text: z.string().min(1).max(10_000), humanLike: z.boolean().default(false) }),
  z.object({
    type: z.literal('KEY_PRESS'),
    key: z.string().refine((k) => (NAMED_KEYS as readonly string[]).includes(k) || [...k].length === 1, {
      message: `key must be one of ${NAMED_KEYS.join(', ')} or a single character`,
    }),
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
