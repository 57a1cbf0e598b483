/**
 * The OpenAI-compatible endpoints: `POST /v1/chat/completions` and `GET /v1/models`.
 * Requests accept the other fields OpenAI clients send (ignored); answers follow the
 * shapes of the official SDKs plus the contract's extra `service` object.
 */
import { z } from 'zod';
import { MAX_COST_USD, maxCostSchema, TASK_LIMITS } from './task.schema';

/** A maxCost written as text (OpenAI metadata values are strings): above 0, at most 10000, as decimals. */
export const MAX_COST_TEXT = /^(?:[1-9][0-9]{0,3}(?:\.[0-9]+)?|10000|0\.[0-9]*[1-9][0-9]*)$/;

export const CHAT_MODEL_ID = 'service-browser-1';
export const DEFAULT_MAX_TOKENS = 2000;

const contentPartSchema = z.looseObject({ type: z.string(), text: z.string().optional() }).describe('A content part; only text parts are read');

/** A user message with text: a string, or a part with text, that is not only spaces (JSON Schema of what taskPrompt looks for). */
const USER_MESSAGE_WITH_TEXT = {
  type: 'object',
  required: ['role', 'content'],
  properties: {
    role: { const: 'user' },
    content: {
      anyOf: [
        { type: 'string', pattern: '\\S' },
        { type: 'array', contains: { type: 'object', required: ['type', 'text'], properties: { type: { type: 'string' }, text: { type: 'string', pattern: '\\S' } } } },
      ],
    },
  },
};

export const chatMessageSchema = z
  .looseObject({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']).describe('Who wrote the message'),
    content: z.union([z.string(), z.array(contentPartSchema), z.null()]).optional().describe('Text, or an array of content parts'),
  })
  .describe('One message of the conversation');

const tokenCap = z
  .number()
  .int()
  .min(TASK_LIMITS.maxOutputTokens.min)
  .max(TASK_LIMITS.maxOutputTokens.max)
  .describe(`Output-token cap of the agent's task, ${TASK_LIMITS.maxOutputTokens.min}..${TASK_LIMITS.maxOutputTokens.max}`);

export const chatCompletionRequestSchema = z
  .looseObject({
    // Any other name reaches the route's model_not_found (400); the document names the one model.
    model: z.string().min(1).meta({ enum: [CHAT_MODEL_ID] }).describe(`The only model: ${CHAT_MODEL_ID}`),
    messages: z
      .array(chatMessageSchema)
      .min(1)
      // The route needs a user message with text (taskPrompt); the document says so.
      .meta({ contains: USER_MESSAGE_WITH_TEXT })
      .describe('The last user message with text is the task; the system message and earlier messages are context (at most 50000 characters in all)'),
    stream: z.boolean().nullish().describe('true answers with server-sent events (chat.completion.chunk)'),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish().describe('include_usage adds a last chunk with usage'),
    max_tokens: tokenCap.nullish().describe(`Output-token cap of the task; ${DEFAULT_MAX_TOKENS} by default`),
    max_completion_tokens: tokenCap.nullish().describe('Same as max_tokens (newer clients send this one)'),
    temperature: z.number().nullish().describe('Accepted, ignored'),
    metadata: z
      .looseObject({
        max_cost: z
          .union([maxCostSchema, z.string().regex(MAX_COST_TEXT, `must be a number of USD above 0 and at most ${MAX_COST_USD}`)])
          .optional()
          .describe(`The task's maxCost: most USD its model calls may cost, a number or its string (OpenAI metadata values are strings), above 0 and up to ${MAX_COST_USD}`),
      })
      .nullish()
      .describe('OpenAI request metadata; max_cost is read, other keys are accepted and ignored'),
  })
  .describe('An OpenAI chat completion request; other OpenAI fields are accepted and ignored');
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

export const chatUsageSchema = z.object({
  prompt_tokens: z.number().int().describe('Input tokens of the whole task'),
  completion_tokens: z.number().int().describe('Output tokens of the whole task'),
  total_tokens: z.number().int().describe('Sum of both'),
});

export const serviceInfoSchema = z
  .object({
    sessionId: z.string().describe('The session the request ran in (terminated afterwards)'),
    taskId: z.string().describe('The task; its result stays readable at GET /task/{sessionId}/{taskId}'),
    cost: z.number().describe('USD charged for the task'),
  })
  .describe('Which session and task answered, and what it cost');

export const chatCompletionSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int().describe('Unix seconds'),
  model: z.literal(CHAT_MODEL_ID),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({ role: z.literal('assistant'), content: z.string(), refusal: z.null() }),
      logprobs: z.null(),
      finish_reason: z.literal('stop'),
    }),
  ),
  usage: chatUsageSchema,
  service: serviceInfoSchema,
});
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

export const chatCompletionChunkSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.number().int(),
    model: z.literal(CHAT_MODEL_ID),
    choices: z.array(
      z.object({
        index: z.number().int(),
        delta: z.object({ role: z.literal('assistant').optional(), content: z.string().optional() }),
        logprobs: z.null(),
        finish_reason: z.enum(['stop']).nullable(),
      }),
    ),
    usage: chatUsageSchema.nullish().describe('Only on the last chunk, when stream_options.include_usage is set'),
    service: serviceInfoSchema.partial({ cost: true }).optional().describe('On the first chunk (ids) and the finishing chunk (with cost)'),
  })
  .describe('One `data:` line of the stream; the stream ends with `data: [DONE]`. Lines starting with `:` are progress comments');
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;

export const openAiErrorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string().describe('invalid_request_error, authentication_error, insufficient_quota, rate_limit_error, guardrail_error, task_error, server_error, ...'),
      code: z.string().nullable().describe('model_not_found, guardrail_triggered, or the service code in lower case (invalid_api_key, insufficient_balance, rate_limit_exceeded, no_instances_available, ...)'),
    }),
  })
  .describe('Error body of the OpenAI-compatible endpoints');
export type OpenAiError = z.infer<typeof openAiErrorSchema>;

export const modelSchema = z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() });
export const modelListSchema = z.object({ object: z.literal('list'), data: z.array(modelSchema) });
