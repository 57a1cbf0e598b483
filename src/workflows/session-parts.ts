/**
 * The parts of one run of a session workflow, made once when it starts and handed to the
 * message handlers (handlers.ts) and the task loop (task-loop.ts). Deterministic: no I/O.
 */
import * as wf from '@temporalio/workflow';
import { BrowserLease } from './browser-lease';
import { SessionState } from './session-state';
import type { SessionInput } from '../contracts/session-types';

export interface Session {
  readonly input: SessionInput;
  /** Tasks, control and status: what queries answer. */
  readonly state: SessionState;
  /** The worker holding the browser, and the lease on it. */
  readonly lease: BrowserLease;
  /** The agent step in flight. */
  readonly step: AgentStep;
}

export function openSession(input: SessionInput): Session {
  const state = new SessionState(input.sessionId, Date.now(), input.carried);
  const step = new AgentStep();
  // A lost worker ends the step in flight: the task loop then recovers the session.
  const lease = new BrowserLease(input, state, () => step.cancel());
  return { input, state, lease, step };
}

/**
 * The cancellation scope of the agent step in flight, if any. A takeover, a stop, the task's
 * time limit or a lost worker cancel it; a takeover waits until it is closed.
 */
export class AgentStep {
  #scope?: wf.CancellationScope;

  get running(): boolean {
    return this.#scope !== undefined;
  }

  /** The scope the next step runs in; `close` it once the step settled. */
  open(): wf.CancellationScope {
    const scope = new wf.CancellationScope();
    this.#scope = scope;
    return scope;
  }

  close(scope: wf.CancellationScope): void {
    if (this.#scope === scope) this.#scope = undefined;
  }

  cancel(): void {
    this.#scope?.cancel();
  }
}
