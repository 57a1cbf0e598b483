import { failureOf } from '../contracts/errors';
import type { PreviousTask, StepInput, StepRequest, TaskParams } from '../contracts/session-types';

/** The current task's prompt, parameters and previous tasks per session, as its first step here brought them (see StepRequest). */
export class TaskContexts {
  private readonly held = new Map<string, { taskId: string; params: TaskParams; previousTasks: PreviousTask[] }>();

  /** The step's full input: its own fields and the task's context, brought now or by an earlier step. */
  inputOf(request: StepRequest | StepInput): StepInput {
    if ('params' in request) return request; // a workflow started before steps carried the context once
    const { context, ...step } = request;
    if (context) this.held.set(step.sessionId, { taskId: step.taskId, ...context });
    const held = this.held.get(step.sessionId);
    if (!held || held.taskId !== step.taskId) {
      throw failureOf('TASK_CONTEXT_UNAVAILABLE', "This worker does not hold the task's prompt and parameters");
    }
    return { ...step, params: held.params, previousTasks: held.previousTasks };
  }

  forget(sessionId: string): void {
    this.held.delete(sessionId);
  }
}
