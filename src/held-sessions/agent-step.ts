import type { AgentRunner } from '../agent/agent';
import type { SecretVault } from '../agent/secrets/vault';
import type { Spending } from '../agent/step-context';
import type { BrowserPool, BrowserSession } from '../browser/pool';
import type { TrafficMeter } from '../browser/traffic-meter';
import { isServiceError } from '../contracts/errors';
import type { CancelledStep, StepInput, StepResult } from '../contracts/session-types';
import type { Logger } from '../logger';
import { workerMetrics } from '../metrics/worker-metrics';
import type { Recorder } from '../recording/recorder';

export interface StepDeps {
  pool: BrowserPool;
  agent: AgentRunner;
  vault?: SecretVault;
  recorder?: Recorder;
  spending?: Pick<Spending, 'charge'>;
  meter?: Pick<TrafficMeter, 'takeForStep' | 'capStep'>;
  mask: (sessionId: string, text: string) => string;
  /** Stores the task's downloads and captured requests on its record. */
  collect: (sessionId: string, taskId: string) => Promise<unknown>;
  logger: Logger;
}

export type StepAnswer = StepResult & { cost: number };

/**
 * A step that did not end: stopped (`cancelled`: what it spent, and what the model said), or
 * failed, with its message and details masked of the session's secrets.
 */
export class StepFailure extends Error {
  constructor(
    readonly error: unknown,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly cancelled?: CancelledStep,
  ) {
    super(message);
  }
}

/**
 * One step of the agent on the session's page: what its model calls cost is charged as it
 * ends, the managed proxy's traffic since the previous step is reported with it, and a task
 * that is done has its downloads and requests stored before the step answers.
 */
export async function runAgentStep(deps: StepDeps, input: StepInput, signal: AbortSignal): Promise<StepAnswer> {
  const log = deps.logger.child({ sessionId: input.sessionId, taskId: input.taskId, step: input.stepNo });
  const timing = workerMetrics.stepStarted();
  const spent = { inputTokens: 0, outputTokens: 0 };
  const heard: { said?: string } = {};
  let charged = false;
  try {
    const session = deps.pool.get(input.sessionId);
    if (session) {
      session.billedTaskId = input.taskId;
      // The step's proxy traffic stops where the task's maxCost would be passed.
      deps.meter?.capStep(session, input.remaining.cost);
    }
    const result = await deps.agent.step(input, signal, log, spent, heard);
    // (a one-time code typed in the step is masked from now on, on any worker)
    await deps.vault?.flush(input.sessionId);
    if (session) session.changedAt = Date.now();
    await chargeStep(deps, input, result.cost);
    charged = true;
    await finishStep(deps, input, result, session, log);
    timing.ended(result);
    return result;
  } catch (err) {
    timing.failed(signal.aborted);
    // A step that stopped or failed leaves no bound on the session's traffic (a person may take over now).
    const held = deps.pool.get(input.sessionId);
    if (held) deps.meter?.capStep(held, undefined);
    // The model calls made before the step stopped were paid for all the same.
    if (!charged) await chargeStep(deps, input, deps.agent.costOf(spent));
    // Stopped (pause, stop, takeover, timeout): the tokens already used go back with it.
    if (signal.aborted) throw new StepFailure(err, 'The agent step was cancelled', undefined, { usage: spent, cost: deps.agent.costOf(spent), ...(heard.said ? { said: heard.said } : {}) });
    throw maskedFailure(deps, input.sessionId, err, log);
  }
}

/** What a step adds to its result once charged: the proxy's traffic, the recording settled for a person, the artifacts of a task that is done. */
async function finishStep(deps: StepDeps, input: StepInput, result: StepAnswer, session: BrowserSession | undefined, log: Logger): Promise<void> {
  const proxy = session ? await deps.meter?.takeForStep(session) : undefined;
  if (proxy) withProxyTraffic(result, proxy);
  // The task waits for a person now: its recording so far is there for them to look at.
  if (result.kind === 'human_input') await deps.recorder?.settle(input.taskId);
  if (result.kind !== 'done') return;
  // The task's downloads and requests are stored before the workflow hears of the end, so
  // the answer goes out without another activity round trip.
  try {
    await deps.collect(input.sessionId, input.taskId);
    result.artifactsCollected = true;
  } catch (err) {
    log.warn({ err }, 'downloads and requests not collected with the last step; the workflow collects them');
  }
}

/** Managed proxy traffic since the previous step (already charged as it flowed), reported with the step and in its cost. */
export function withProxyTraffic(result: StepAnswer, proxy: { bytes: number; cost: number }): void {
  result.proxy = proxy;
  result.cost = Math.round((result.cost + proxy.cost) * 1e9) / 1e9;
}

/** Charges the user what a step's model calls cost, as the step ends; not charged now (a busy database), the task's end charges it. */
async function chargeStep(deps: StepDeps, input: StepInput, usd: number): Promise<void> {
  if (!deps.spending || !(usd > 0)) return;
  try {
    await deps.spending.charge(input.userId, usd, input.taskId);
  } catch (err) {
    deps.logger.warn({ err, sessionId: input.sessionId, taskId: input.taskId }, 'step not charged yet; its task charges it when it ends');
  }
}

/** A failed step's error with the session's secrets masked from its message and details. */
function maskedFailure(deps: StepDeps, sessionId: string, err: unknown, log: Logger): StepFailure {
  if (isServiceError(err)) {
    const message = deps.mask(sessionId, err.message);
    log.warn({ code: err.code, err: message }, 'agent step failed');
    const details = err.details ? (deps.vault?.maskDeep(sessionId, err.details) ?? err.details) : undefined;
    return new StepFailure(err, message, details);
  }
  const message = deps.mask(sessionId, err instanceof Error ? err.message : String(err));
  log.error({ err: message }, 'agent step crashed');
  return new StepFailure(err, message);
}
