import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { failureForStatus, toLlmFailure, type FailureContext } from './errors';
import type { LlmClient, LlmMessage, LlmRequest, LlmResponse, LlmToolCall, LlmToolSpec } from './types';

export interface ProviderClientOptions {
  /** Empty or undefined: the provider's public endpoint. */
  baseURL?: string;
  apiKey: string;
  model: string;
  /** Retries the SDK makes itself on connection errors, 408, 409, 429 and 5xx. */
  maxRetries: number;
  timeoutMs: number;
  /**
   * The local model role only: a brief request says so in the body (`"thought": false`), and
   * the answer's grammar then holds the actions alone.
   */
  thoughtField?: boolean;
}

/** Local servers (Ollama, vLLM) need no key, but the SDK refuses to start without one. */
export const PLACEHOLDER_API_KEY = 'none';

/**
 * Chat completions with function tools: OpenAI itself and the servers that copy its wire
 * format (Ollama, vLLM, OpenRouter, LiteLLM) via the base URL.
 */
export function createOpenAiClient(opts: ProviderClientOptions): LlmClient {
  const apiKey = opts.apiKey || PLACEHOLDER_API_KEY;
  const baseURL = opts.baseURL || undefined;
  const sdk = new OpenAI({ apiKey, baseURL, maxRetries: opts.maxRetries, timeout: opts.timeoutMs });
  // Newer OpenAI models reject max_tokens; switched once the provider says so.
  let useMaxCompletionTokens = false;

  return {
    model: opts.model,
    async complete(req: LlmRequest): Promise<LlmResponse> {
      const ctx: FailureContext = { provider: 'openai', apiKey, baseURL, timeoutMs: opts.timeoutMs, signal: req.signal };
      const send = async () => {
        const body: ChatCompletionCreateParamsNonStreaming = {
          model: opts.model,
          messages: toOpenAiMessages(req.system, req.messages),
          ...(useMaxCompletionTokens ? { max_completion_tokens: req.maxTokens } : { max_tokens: req.maxTokens }),
          ...(req.tools.length ? { tools: req.tools.map(toOpenAiTool), tool_choice: 'auto' as const } : {}),
          ...(opts.thoughtField && req.brief ? ({ thought: false } as object) : {}),
        };
        return sdk.chat.completions.create(body, { signal: req.signal });
      };
      let completion: ChatCompletion;
      try {
        try {
          completion = await send();
        } catch (err) {
          if (useMaxCompletionTokens || !asksForMaxCompletionTokens(err)) throw err;
          useMaxCompletionTokens = true;
          completion = await send();
        }
      } catch (err) {
        throw toLlmFailure(err, ctx);
      }
      return fromCompletion(completion, req, opts.model, ctx);
    },
  };
}

function asksForMaxCompletionTokens(err: unknown): boolean {
  return err instanceof OpenAI.BadRequestError && err.message.includes('max_completion_tokens');
}

function toOpenAiTool(spec: LlmToolSpec): ChatCompletionTool {
  return { type: 'function', function: { name: spec.name, description: spec.description, parameters: withoutSchemaKeyword(spec.parameters) } };
}

/** zod's JSON Schema carries "$schema", which some OpenAI-compatible servers refuse. */
export function withoutSchemaKeyword(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

export function toOpenAiMessages(system: string, messages: LlmMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [{ role: 'system', content: system }];
  for (const message of messages) {
    if (message.role === 'user') {
      out.push(
        message.image
          ? {
              role: 'user',
              content: [
                { type: 'text', text: message.content },
                { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${message.image}` } },
              ],
            }
          : { role: 'user', content: message.content },
      );
    } else if (message.role === 'assistant') {
      const toolCalls = message.toolCalls?.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } }));
      out.push(toolCalls?.length ? { role: 'assistant', content: message.content || null, tool_calls: toolCalls } : { role: 'assistant', content: message.content });
    } else {
      out.push({ role: 'tool', tool_call_id: message.toolCallId, content: message.content });
    }
  }
  return out;
}

function fromCompletion(completion: ChatCompletion, req: LlmRequest, model: string, ctx: FailureContext): LlmResponse {
  const choice = completion.choices?.[0];
  if (!choice) {
    // OpenRouter reports upstream failures as an error object in an HTTP 200 body.
    const error = (completion as unknown as { error?: { code?: unknown; message?: unknown } }).error;
    if (error) {
      const status = typeof error.code === 'number' ? error.code : 502;
      throw failureForStatus(status, typeof error.message === 'string' ? error.message : undefined, typeof error.code === 'string' ? error.code : undefined, ctx);
    }
    throw failureForStatus(502, 'The response has no choices', undefined, ctx);
  }
  const message = choice.message;
  const text = message.content ?? message.refusal ?? '';
  const toolCalls: LlmToolCall[] = [];
  for (const [i, call] of (message.tool_calls ?? []).entries()) {
    if (call.type !== 'function') continue;
    const args: unknown = call.function.arguments;
    toolCalls.push({
      // Some local servers leave ids empty; tool results must still point at their call.
      id: call.id || `call_${completion.id || Date.now().toString(36)}_${i}`,
      name: call.function.name,
      arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
    });
  }
  const usage = completion.usage;
  return {
    text,
    toolCalls,
    usage: {
      inputTokens: usage?.prompt_tokens ?? estimateInputTokens(req),
      outputTokens: usage?.completion_tokens ?? estimateOutputTokens(text, toolCalls),
    },
    model: completion.model || model,
  };
}

/** Rough tokens (4 characters each) for servers that report no usage. */
const IMAGE_CHARS = 4000;

export function estimateInputTokens(req: LlmRequest): number {
  let chars = req.system.length + JSON.stringify(req.tools).length;
  for (const message of req.messages) {
    chars += message.content.length;
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) chars += call.name.length + call.arguments.length;
    if (message.role === 'user' && message.image) chars += IMAGE_CHARS;
  }
  return Math.ceil(chars / 4);
}

export function estimateOutputTokens(text: string, toolCalls: LlmToolCall[]): number {
  let chars = text.length;
  for (const call of toolCalls) chars += call.name.length + call.arguments.length;
  return Math.ceil(chars / 4);
}
