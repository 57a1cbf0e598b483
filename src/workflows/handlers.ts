/**
 * Every message a session workflow answers (messages.ts): the queries, and the updates the
 * API sends. Validators reject a message before it is accepted; handlers change the state
 * through SessionState's methods and reach the browser through the lease. Deterministic: no
 * I/O, no Node.
 */
import * as wf from '@temporalio/workflow';
import { Mutex } from 'async-mutex';
import {
  awaitReadyUpdate,
  awaitTaskUpdate,
  guardrailUpdate,
  interactionUpdate,
  newTaskUpdate,
  sessionQuery,
  stateUpdate,
  taskQuery,
} from '../contracts/session-messages';
import { publishControl, publishUpdate } from './session-records';
import type { Session } from './session-parts';
import { reject, type SessionState } from './session-state';
import type { InteractionAction, SessionView, TaskOutcome, TaskParams } from '../contracts/session-types';

type StateChange = 'pause' | 'resume' | 'stop' | 'terminate';

/**
 * What each message does, as the Temporal UI and `temporal workflow metadata` list it: an
 * operator can send the updates from there (docs/operations.md) with the same effect as the API.
 */
export const DESCRIPTIONS = {
  session: "The session's view: status, current task, manual control, timestamps (as GET /session/:id).",
  task: "One task's view by its id (as GET /task/:sessionId/:taskId); null for an unknown id.",
  awaitReady: 'Waits until the session holds its browser (or failed to get one); answers its view.',
  newTask: 'Queues a task. Input {"taskId": "task_...", "params": {"prompt": "..."}}; refused while a task runs.',
  awaitTask: 'Waits until the task ends or asks for a human, at most timeoutMs. Input {"taskId": "...", "timeoutMs": 30000}.',
  state: 'Pauses, resumes or stops the running task, or terminates the session. Input {"newState": "pause" | "resume" | "stop" | "terminate"}; answers the confirmation ("Task paused").',
  guardrail: 'Answers the question the agent asked a human (a code, an approval). Input {"prompt": "<the answer>"}.',
  interaction: 'A human\'s hand on the browser: takeOverControl, releaseControl, or an action (click, type, scroll...). Input {"action": {"type": "takeOverControl"}}.',
} as const;

export function registerHandlers(s: Session): void {
  const { state } = s;
  // Handlers that wait on activities (interactions, confirmations) run one at a time, in
  // the order they arrived: two clicks never overtake each other, and a click never runs
  // while the takeover before it still waits for the agent's step to stop.
  const lock = new Mutex();

  wf.setHandler(sessionQuery, () => state.view(), { description: DESCRIPTIONS.session });
  wf.setHandler(taskQuery, (taskId) => state.taskView(taskId, Date.now()), { description: DESCRIPTIONS.task });
  wf.setHandler(awaitReadyUpdate, () => untilReady(state), { description: DESCRIPTIONS.awaitReady });
  wf.setHandler(newTaskUpdate, ({ taskId, params }) => newTask(state, taskId, params), { validator: (_task) => state.assertCanStartTask(), description: DESCRIPTIONS.newTask });
  wf.setHandler(awaitTaskUpdate, ({ taskId, timeoutMs }) => untilSettled(state, taskId, timeoutMs), { description: DESCRIPTIONS.awaitTask });
  wf.setHandler(stateUpdate, ({ newState }) => changeState(s, lock, newState), { validator: ({ newState }) => state.assertStateChange(newState), description: DESCRIPTIONS.state });
  wf.setHandler(guardrailUpdate, ({ prompt }) => state.answerGuardrail(prompt, Date.now()), { validator: (_answer) => state.assertGuardrailAnswer(), description: DESCRIPTIONS.guardrail });
  wf.setHandler(interactionUpdate, ({ action }) => lock.runExclusive(() => interact(s, action)), { validator: (_action) => state.assertInteraction(), description: DESCRIPTIONS.interaction });
}

/** The session has a browser, or failed to get one. */
async function untilReady(state: SessionState): Promise<SessionView> {
  await wf.condition(() => state.status !== 'pending');
  return state.view();
}

function newTask(state: SessionState, taskId: string, params: TaskParams): { taskId: string } {
  state.enqueueTask(taskId, params, Date.now());
  return { taskId };
}

/** The task's outcome once it ended or waits for a human, or null after `timeoutMs`. */
async function untilSettled(state: SessionState, taskId: string, timeoutMs: number): Promise<TaskOutcome | null> {
  await wf.condition(() => state.isTaskSettled(taskId) || state.ended, timeoutMs);
  return state.isTaskSettled(taskId) ? state.taskView(taskId, Date.now()) : null;
}

/** pause, resume, stop or terminate: every change but a resume cancels the step in flight. */
async function changeState({ state, step }: Session, lock: Mutex, newState: StateChange): Promise<string> {
  const confirmation = state.applyStateChange(newState, Date.now());
  if (newState !== 'resume') step.cancel();
  if (newState === 'pause' || newState === 'resume') await lock.runExclusive(() => publishUpdate(state, confirmation));
  return confirmation;
}

/**
 * The human's hand on the browser: taking or returning control, or an action (which takes
 * control first). Taking control waits until the agent's step stopped.
 */
async function interact({ input, state, lease, step }: Session, action: InteractionAction): Promise<string> {
  // start-session answers before the browser is handed over: an interaction that comes first waits for it.
  if (state.status === 'pending') {
    await wf.condition(() => state.status !== 'pending');
    if (state.ended || state.endRequested) throw reject('SESSION_NOT_FOUND', 'Session has ended');
  }
  if (action.type === 'releaseControl') {
    const text = state.release(Date.now()) ? 'Control returned to the agent; the task resumes' : 'Control returned to the agent';
    await publishControl(state, text);
    return text;
  }
  if (!state.manual) {
    const text = state.takeOver(Date.now()) ? 'Manual control taken; the agent is paused' : 'Manual control taken';
    step.cancel();
    await wf.condition(() => !step.running);
    await publishControl(state, text);
    if (action.type === 'takeOverControl') return text;
  } else if (action.type === 'takeOverControl') {
    return 'Manual control is already taken';
  }
  state.touch(Date.now());
  // A hibernated session wakes for the person's hand (the task loop brings the browser back).
  if (state.hibernated) await wf.condition(() => !state.hibernated || state.ended);
  await lease.browser().control.interact({ sessionId: state.sessionId, action, taskId: state.current?.taskId, userId: input.userId });
  return `${action.type} performed`;
}
