/**
 * What a session tells the service outside its browser: its record (status, tasks, end) and
 * its events, as activities on the shared queue. Deterministic: no I/O, no Node.
 */
import * as wf from '@temporalio/workflow';
import type { SessionActivities } from '../activities/session.activities';
import { SessionStatusKey } from '../contracts/search-attributes';
import type { SessionState } from './session-state';
import type { SessionStatus } from '../contracts/session-types';

export type SessionMessage = Parameters<SessionActivities['publish']>[0]['message'];

/** Any worker runs these; retried for a while, as the store or the event bus may blink. */
export const records = wf.proxyActivities<SessionActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 20 },
});

/** The session's status, in its state, its search attribute and its record. */
export async function setStatus(state: SessionState, status: SessionStatus): Promise<void> {
  state.setStatus(status);
  wf.upsertSearchAttributes([{ key: SessionStatusKey, value: status }]);
  await records.markSession({ sessionId: state.sessionId, status, workerId: state.workerId });
}

/** An event to the session's watchers (API clients, the live view page). */
export function publish(state: SessionState, message: SessionMessage): Promise<void> {
  return records.publish({ sessionId: state.sessionId, message });
}

/** A progress line of the current task. */
export function publishUpdate(state: SessionState, message: string): Promise<void> {
  return publish(state, { type: 'response_update', taskId: state.current?.taskId, data: { message } });
}

/** Who holds the browser changed: watchers (the live view page) learn it from `data.control`. */
export function publishControl(state: SessionState, message: string): Promise<void> {
  return publish(state, { type: 'response_update', taskId: state.current?.taskId, data: { message, control: state.manual ? 'manual' : 'agent' } });
}
