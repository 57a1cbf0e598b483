import { createAnthropicClient } from './anthropic.client';
import { createOpenAiClient } from './openai.client';
import type { LlmClient } from './types';

export interface LlmConfig {
  LLM_PROVIDER: 'openai' | 'anthropic';
  LLM_BASE_URL?: string;
  /** May be empty: local servers (Ollama, vLLM) need none. */
  LLM_API_KEY: string;
  LLM_MODEL: string;
  LLM_MAX_RETRIES: number;
  LLM_TIMEOUT_MS: number;
}

export function createLlmClient(config: LlmConfig): LlmClient {
  const opts = {
    baseURL: config.LLM_BASE_URL,
    apiKey: config.LLM_API_KEY,
    model: config.LLM_MODEL,
    maxRetries: config.LLM_MAX_RETRIES,
    timeoutMs: config.LLM_TIMEOUT_MS,
  };
  return config.LLM_PROVIDER === 'anthropic' ? createAnthropicClient(opts) : createOpenAiClient(opts);
}
