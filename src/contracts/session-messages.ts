/**
 * Every message of the session workflow, shared by the workflow and the API.
 * Imports nothing from Node: it is bundled into the workflow sandbox.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { InteractionAction, SessionView, TaskParams, TaskView, TaskOutcome } from './session-types';

export const SESSION_WORKFLOW = 'sessionWorkflow';
export const sessionWorkflowId = (sessionId: string): string => `session-${sessionId}`;

/** Resolves once the session has a browser (or failed to get one). */
export const awaitReadyUpdate = defineUpdate<SessionView>('awaitReady');
/** Starts a task; rejected with TASK_ALREADY_RUNNING while another runs. */
export const newTaskUpdate = defineUpdate<{ taskId: string }, [{ taskId: string; params: TaskParams }]>('newTask');
/** Waits up to `timeoutMs` for the task to end; answers its outcome or null if still going. */
export const awaitTaskUpdate = defineUpdate<TaskOutcome | null, [{ taskId: string; timeoutMs: number }]>('awaitTask');
/** pause | resume | stop | terminate; answers the confirmation text. */
export const stateUpdate = defineUpdate<string, [{ newState: 'pause' | 'resume' | 'stop' | 'terminate' }]>('state');
/** The human's answer to a guardrail; answers the confirmation text. */
export const guardrailUpdate = defineUpdate<string, [{ prompt: string }]>('guardrail');

/** Manual control: takeOverControl, releaseControl, CLICK, DOUBLE_CLICK, TYPE, KEY_PRESS. */
export const interactionUpdate = defineUpdate<string, [{ action: InteractionAction }]>('interaction');

export const sessionQuery = defineQuery<SessionView>('session');
export const taskQuery = defineQuery<TaskView | null, [string]>('task');
