/**
 * The session workflow's input, for the API's sessions and trigger runs alike: what the
 * session is asked (its first task, its profile, proxy, policy and reach-out) with the
 * service's limits.
 */
import type { Config } from '../config';
import type { ReplaySource, SessionInput, TaskParams } from '../contracts/session-types';
import type { TaskParamsInput } from '../contracts/schemas/task.schema';

/** The parts of the configuration a session's input carries. */
export type SessionLimitsConfig = Pick<Config, 'SESSION_IDLE_TIMEOUT_MS' | 'MAX_AGENT_STEPS' | 'ORPHAN_GRACE_MS' | 'HIBERNATE_AFTER_MS' | 'GUARDRAIL_MAX_WAIT_MS' | 'SESSION_IDLE_DISCARD_MS'>;

export type SessionAsk = Omit<SessionInput, 'idleTimeoutMs' | 'maxSteps' | 'orphanGraceMs' | 'hibernateAfterMs' | 'guardrailMaxWaitMs' | 'idleDiscardMs' | 'carried'>;

/** The session workflow's input: what is asked, with the service's limits. */
export function sessionInput(config: SessionLimitsConfig, ask: SessionAsk): SessionInput {
  return {
    ...ask,
    idleTimeoutMs: config.SESSION_IDLE_TIMEOUT_MS,
    maxSteps: config.MAX_AGENT_STEPS,
    orphanGraceMs: config.ORPHAN_GRACE_MS,
    hibernateAfterMs: config.HIBERNATE_AFTER_MS,
    guardrailMaxWaitMs: config.GUARDRAIL_MAX_WAIT_MS,
    idleDiscardMs: config.SESSION_IDLE_DISCARD_MS,
  };
}

/** The validated task as the workflow carries it: the schema's output, secrets only when given. */
export function toTaskParams(t: TaskParamsInput, replay?: ReplaySource): TaskParams {
  const { secrets, replayOf: _named, ...rest } = t;
  return { ...rest, ...(secrets.length ? { secrets } : {}), ...(replay ? { replay } : {}) };
}
