/** The model behind one small interface; providers live in their own files. */
export interface LlmToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface LlmToolCall {
  id: string;
  name: string;
  /** Raw JSON text as the model produced it (may be invalid; the caller validates). */
  arguments: string;
}

export type LlmMessage =
  | { role: 'user'; content: string; image?: string /* base64 JPEG */ }
  | { role: 'assistant'; content: string; toolCalls?: LlmToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

export interface LlmRequest {
  system: string;
  messages: LlmMessage[];
  tools: LlmToolSpec[];
  maxTokens: number;
  /**
   * Whether the model needs no thought before its actions at this call (nothing to weigh since
   * its last answer). Only the local model's grammar reads it; other providers ignore it.
   */
  brief?: boolean;
  signal?: AbortSignal;
}

export interface LlmResponse {
  text: string;
  toolCalls: LlmToolCall[];
  usage: { inputTokens: number; outputTokens: number };
  model: string;
}

export interface LlmClient {
  readonly model: string;
  /**
   * Whether the model's answers follow the tools' schemas exactly (the local model's grammar):
   * then element indexes are offered as the observation's list (page-bound-tools.ts).
   */
  readonly followsSchemas?: boolean;
  complete(req: LlmRequest): Promise<LlmResponse>;
}
