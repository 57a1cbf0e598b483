/**
 * The local model's first call evaluates the whole system prompt and the tools' descriptions
 * (about 1,200 tokens: 25 s on two cores). A worker asks for one token with that prefix as it
 * starts, so a user's first task finds it evaluated.
 */
import type { Logger } from 'pino';
import type { LlmClient } from './llm/types';
import { boundToPage } from './page-bound-tools';
import { systemPrompt } from './prompts';
import { toolSpecs } from './tools';

const ATTEMPTS = 40;
const RETRY_MS = 3_000;
const CALL_TIMEOUT_MS = 180_000;

/** Sends the prefix every task's prompt starts with, until the model answers (it may still be loading). */
export async function warmUpModel(llm: LlmClient, logger: Logger, stopped: () => boolean = () => false): Promise<void> {
  // The tools as a task sends them (bound to a page: described the same on every page).
  const tools = boundToPage(toolSpecs(), '');
  for (let attempt = 1; attempt <= ATTEMPTS && !stopped(); attempt++) {
    const started = Date.now();
    try {
      await llm.complete({ system: systemPrompt(undefined), messages: [{ role: 'user', content: 'New task: ' }], tools, maxTokens: 1, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
      logger.info({ ms: Date.now() - started }, 'local model warmed up with the agent prompt');
      return;
    } catch (err) {
      logger.debug({ err: String(err), attempt }, 'local model not warmed up yet');
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
    }
  }
}
