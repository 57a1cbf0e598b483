import { createAnthropicClient } from './anthropic.client';
import { createOpenAiClient } from './openai.client';
import type { LlmClient } from './types';

export interface LlmConfig {
  LLM_PROVIDER: 'openai' | 'anthropic' | 'local';
  LLM_BASE_URL?: string;
  /** May be empty: local servers (Ollama, vLLM) need none. */
  LLM_API_KEY: string;
  LLM_MODEL: string;
  LLM_MAX_RETRIES: number;
  LLM_TIMEOUT_MS: number;
  /** LLM_PROVIDER=local: when its model writes a thought before its actions. */
  LLM_THOUGHT?: 'always' | 'feedback';
  /** LLM_PROVIDER=local: where the model role serves its OpenAI-compatible endpoint. */
  LOCAL_MODEL_URL?: string;
  MODEL_PORT?: number;
  /** The key the model role asks for (MODEL_API_KEY), when it has one. */
  MODEL_API_KEY?: string;
}

/** The model name the agent sends to (and prices for) the local model server. */
export const LOCAL_MODEL_NAME = 'local';

export function createLlmClient(config: LlmConfig): LlmClient {
  if (config.LLM_PROVIDER === 'local') {
    // The model role speaks the OpenAI wire format: the agent reaches it like any hosted provider.
    const client = createOpenAiClient({
      baseURL: config.LOCAL_MODEL_URL ?? `http://127.0.0.1:${config.MODEL_PORT ?? 3090}/v1`,
      apiKey: config.MODEL_API_KEY || LOCAL_MODEL_NAME,
      model: LOCAL_MODEL_NAME,
      maxRetries: config.LLM_MAX_RETRIES,
      timeoutMs: config.LLM_TIMEOUT_MS,
      // The model role's own field: no thought in the answer's grammar at a brief call.
      thoughtField: (config.LLM_THOUGHT ?? 'feedback') === 'feedback',
    });
    // Its answers are generated under a grammar made of the tools' schemas.
    return Object.assign(client, { followsSchemas: true });
  }
  const opts = {
    baseURL: config.LLM_BASE_URL,
    apiKey: config.LLM_API_KEY,
    model: config.LLM_MODEL,
    maxRetries: config.LLM_MAX_RETRIES,
    timeoutMs: config.LLM_TIMEOUT_MS,
  };
  return config.LLM_PROVIDER === 'anthropic' ? createAnthropicClient(opts) : createOpenAiClient(opts);
}
