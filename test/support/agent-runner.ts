/**
 * The agent runner on a real page for unit tests: a model answering with scripted lists of
 * tool calls, a recorder keeping what it is given, an optional policy.
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { BrowserPool, BrowserSession } from '../../src/browser/pool';
import type { PolicyDocument } from '../../src/contracts/policy-rules';
import type { FileProvider } from '../../src/browser/task-files';
import type { StepInput, TaskParams } from '../../src/contracts/session-types';
import { createLogger } from '../../src/logger';
import type { Recorder } from '../../src/recording/recorder';
import { AgentRunner } from '../../src/agent/agent';
import { SecretVault } from '../../src/agent/secrets/vault';
import type { SecretEntry } from '../../src/contracts/session-types';
import type { LlmMessage, LlmRequest, LlmResponse } from '../../src/agent/llm/types';

export interface Call {
  tool: string;
  args: Record<string, unknown>;
  /** The words the model writes with the answer (the first call's; 'Working on it.' when none). */
  says?: string;
}

type Llm = { model: string; followsSchemas?: boolean; complete(req: LlmRequest): Promise<LlmResponse> };

/**
 * A model answering each request with the next list of calls (the last repeats), the requests
 * it got and the tools each offered; `followsSchemas` as the local model (tools bound to the page).
 */
export function scriptedLlm(answers: Call[][], opts: { followsSchemas?: boolean } = {}): { llm: Llm; requests: LlmMessage[][]; tools: LlmRequest['tools'][]; brief: (boolean | undefined)[] } {
  const requests: LlmMessage[][] = [];
  const tools: LlmRequest['tools'][] = [];
  const brief: (boolean | undefined)[] = [];
  let n = 0;
  const llm = {
    model: 'scripted',
    ...(opts.followsSchemas ? { followsSchemas: true } : {}),
    async complete(req: LlmRequest): Promise<LlmResponse> {
      requests.push(structuredClone(req.messages));
      tools.push(structuredClone(req.tools));
      brief.push(req.brief);
      const calls = answers[Math.min(n, answers.length - 1)];
      n += 1;
      const toolCalls = calls.map((call, i) => ({ id: `call_${n}_${i}`, name: call.tool, arguments: JSON.stringify(call.args) }));
      return { text: calls[0]?.says ?? 'Working on it.', toolCalls, usage: { inputTokens: 100, outputTokens: 10 }, model: 'scripted' };
    },
  };
  return { llm, requests, tools, brief };
}

export type Recorded = { action: string; outcome: string; element?: { name?: string } };

/** The runner on the tab `tab.page` (a new tab becomes it), recording into `recorded`. */
export function runnerOn(tab: { page: Page; context: BrowserContext }, llm: Llm, policy?: PolicyDocument, files?: FileProvider, secrets?: SecretEntry[]): { runner: AgentRunner; recorded: Recorded[] } {
  const recorded: Recorded[] = [];
  const session = {
    sessionId: 'ses_1',
    context: tab.context,
    get page() {
      return tab.page;
    },
    set page(p: Page) {
      tab.page = p;
    },
    crashed: false,
    artifacts: {},
    changedAt: 0,
  } as unknown as BrowserSession;
  const pool = { get: () => session } as unknown as BrowserPool;
  const recorder = { begin: async () => undefined, add: async (_owner: unknown, step: Recorded) => void recorded.push(step) } as unknown as Recorder;
  const options = { llm, prices: {}, observationTokenBudget: 4000, contextTokens: 100_000, navigationTimeoutMs: 10_000, vision: false, recorder };
  const vault = secrets ? new SecretVault() : undefined;
  // the task's secrets, held as a worker holds them from the hand-over
  vault?.hold('ses_1', 'task_1', secrets!);
  const runner = new AgentRunner(pool, { ...options, ...(policy ? { policies: { get: async () => policy } } : {}), ...(files ? { files } : {}), ...(vault ? { vault } : {}) });
  return { runner, recorded };
}

const log = createLogger('silent');

function stepInput(stepNo: number, prompt: string, policyId?: string, hasSecrets?: boolean, output?: Pick<TaskParams, 'outputType' | 'outputSchema'>): StepInput {
  const params = { prompt, outputType: 'text', files: [], ...output } as unknown as TaskParams;
  return { sessionId: 'ses_1', userId: 'usr_1', taskId: 'task_1', stepNo, params, previousTasks: [], remaining: { inputTokens: 1_000_000, outputTokens: 100_000 }, policyId, ...(hasSecrets ? { hasSecrets } : {}) };
}

/** Steps until the task is done or asks a human (at most `max`): the steps' results. */
export async function runSteps(runner: AgentRunner, max: number, opts: { policyId?: string; prompt?: string; hasSecrets?: boolean; output?: Pick<TaskParams, 'outputType' | 'outputSchema'> } = {}) {
  const results = [];
  for (let stepNo = 0; stepNo < max; stepNo++) {
    const result = await runner.step(stepInput(stepNo, opts.prompt ?? 'Sign up as Ada, ada@example.com', opts.policyId, opts.hasSecrets, opts.output), new AbortController().signal, log);
    results.push(result);
    if (result.kind !== 'continue') break;
  }
  return results;
}

/** The tool results of a conversation, in order. */
export const toolAnswers = (messages: LlmMessage[]): string[] => messages.filter((m): m is Extract<LlmMessage, { role: 'tool' }> => m.role === 'tool').map((m) => m.content);
