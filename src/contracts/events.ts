/** The live events of a session, as clients receive them (see the Events section of the contract). */
import type { ActionName } from './actions';

/** `message` events: what the agent and the task do. */
export type SessionMessage =
  | { type: 'agent'; content: string; taskId?: string }
  | { type: 'action'; data: { name: ActionName; target?: string; /** Who performed it: the agent's choice, or a step replayed from a recording. */ by?: 'agent' | 'replayed'; blocked?: boolean; refused?: boolean; reason?: string }; taskId?: string }
  | { type: 'response_update'; data: { message: string; control?: 'manual' | 'agent' }; taskId?: string }
  | { type: 'task_completed'; sessionId: string; taskId: string; data: { message: string; files: unknown[]; network: unknown[] }; usage: Record<string, number> }
  | { type: 'guardrail_trigger'; taskId: string; data: { type: string; value: string } }
  /** The session waits for a person and let its browser go; an answer or a takeover wakes it. */
  | { type: 'session_hibernated'; taskId?: string; data: { message: string; bytes: number } }
  /** A hibernated session has its browser again, on the worker named. */
  | { type: 'session_resumed'; taskId?: string; data: { message: string; workerId?: string; sleptMs: number } }
  | { type: 'error'; taskId?: string; error: string; code: string; details?: Record<string, unknown> };

/** Connection-level events, sent under their own Socket.IO event names. */
export type ConnectionEvent =
  | { event: 'end_session'; reason: string }
  | { event: 'instance:disconnected'; reason?: string }
  /** The session has its browser again: `waitedMs` since it lost it; `handedOver` when the worker that held it stopped and handed it over. */
  | { event: 'instance:reconnected'; workerId?: string; waitedMs?: number; handedOver?: boolean };

export type TimelineEntry = (
  | { event: 'message'; payload: SessionMessage }
  | { event: ConnectionEvent['event']; payload: Omit<ConnectionEvent, 'event'> }
) & { sessionId: string; seq: number; timestamp: number };

/** How long an ended session's timeline is kept (readable by its owner and by sockets replaying with auth.lastSeq). */
export const TIMELINE_KEPT_AFTER_END_MS = 60 * 60 * 1000;

/** The room every socket watching a session joins (on any API instance). */
export const sessionRoom = (sessionId: string): string => `session:${sessionId}`;
