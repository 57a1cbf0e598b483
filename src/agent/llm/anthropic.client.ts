import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, Message, MessageParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { toLlmFailure, type FailureContext } from './errors';
import { PLACEHOLDER_API_KEY, estimateInputTokens, estimateOutputTokens, withoutSchemaKeyword, type ProviderClientOptions } from './openai.client';
import type { LlmClient, LlmMessage, LlmRequest, LlmResponse, LlmToolCall, LlmToolSpec } from './types';

/** The Anthropic messages API (Claude), or anything that speaks it, via the base URL. */
export function createAnthropicClient(opts: ProviderClientOptions): LlmClient {
  const apiKey = opts.apiKey || PLACEHOLDER_API_KEY;
  // The SDK appends /v1/messages itself; a base URL copied with /v1 would double it.
  const baseURL = opts.baseURL ? opts.baseURL.replace(/\/+$/, '').replace(/\/v1$/, '') : undefined;
  const sdk = new Anthropic({ apiKey, baseURL, maxRetries: opts.maxRetries, timeout: opts.timeoutMs });

  return {
    model: opts.model,
    async complete(req: LlmRequest): Promise<LlmResponse> {
      const ctx: FailureContext = { provider: 'anthropic', apiKey, baseURL, timeoutMs: opts.timeoutMs, signal: req.signal };
      let message: Message;
      try {
        message = await sdk.messages.create(
          {
            model: opts.model,
            max_tokens: req.maxTokens,
            system: req.system,
            messages: toAnthropicMessages(req.messages),
            ...(req.tools.length ? { tools: req.tools.map(toAnthropicTool), tool_choice: { type: 'auto' as const } } : {}),
          },
          { signal: req.signal },
        );
      } catch (err) {
        throw toLlmFailure(err, ctx);
      }
      return fromMessage(message, req, opts.model);
    },
  };
}

function toAnthropicTool(spec: LlmToolSpec): Tool {
  return { name: spec.name, description: spec.description, input_schema: { type: 'object', ...withoutSchemaKeyword(spec.parameters) } };
}

/**
 * Tool results and user turns that follow one assistant turn become a single user
 * message, tool results first: the API wants every tool_result right after its tool_use.
 */
export function toAnthropicMessages(messages: LlmMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  let results: ToolResultBlockParam[] = [];
  let userBlocks: ContentBlockParam[] = [];
  const flushUser = () => {
    if (results.length || userBlocks.length) out.push({ role: 'user', content: [...results, ...userBlocks] });
    results = [];
    userBlocks = [];
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      results.push({ type: 'tool_result', tool_use_id: message.toolCallId, content: message.content || '(empty)' });
    } else if (message.role === 'user') {
      if (message.content) userBlocks.push({ type: 'text', text: message.content });
      if (message.image) userBlocks.push({ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: message.image } });
    } else {
      flushUser();
      const blocks: ContentBlockParam[] = [];
      // The API refuses empty text blocks.
      if (message.content) blocks.push({ type: 'text', text: message.content });
      for (const call of message.toolCalls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: parseInput(call.arguments) });
      out.push({ role: 'assistant', content: blocks.length ? blocks : [{ type: 'text', text: '(no answer)' }] });
    }
  }
  flushUser();
  return out;
}

/** tool_use input must be an object; invalid JSON was already answered with an error result. */
function parseInput(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function fromMessage(message: Message, req: LlmRequest, model: string): LlmResponse {
  const text: string[] = [];
  const toolCalls: LlmToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text.push(block.text);
    else if (block.type === 'tool_use') toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
  }
  const usage = message.usage as Message['usage'] | undefined;
  const joined = text.join('\n');
  return {
    text: joined,
    toolCalls,
    usage: usage
      ? {
          // Cached prompt parts are reported apart from input_tokens; the budget counts them all.
          inputTokens: usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
          outputTokens: usage.output_tokens,
        }
      : { inputTokens: estimateInputTokens(req), outputTokens: estimateOutputTokens(joined, toolCalls) },
    model: message.model || model,
  };
}
