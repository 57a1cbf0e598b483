/**
 * What makes a task runnable, checked once for every door (REST, the socket, MCP, chat
 * completions, triggers) after the door has parsed its wire format: a prompt to act on
 * (or a replay), and an output schema the service can enforce. The same bad task gets the
 * same error code whichever door it came through; `TaskPlace` only names where the door
 * carries the fields, for the error's text and details.
 */
import { InvalidParameterError, ServiceError } from '../contracts/errors';
import type { CronJobFields } from '../contracts/cron-job-record';
import type { TaskParams } from '../contracts/session-types';
import type { RunTrigger } from '../contracts/trigger-types';
import { TASK_LIMITS, type TaskParamsInput } from '../contracts/schemas/task.schema';
import { outputSchemaProblem } from '../agent/structured-output';

/** Where a door carries a task's fields: their prefix in errors, and the contract's text for an empty prompt where it has one. */
export interface TaskPlace {
  /** `task.` (start-session, run-task), `message.` (a newTask message), `` (MCP, triggers). */
  prefix: string;
  /** The field an empty prompt is reported on; `<prefix>prompt` unless given. */
  promptField?: string;
  /** The message of an empty prompt; `<promptField> must not be empty` unless given. */
  emptyPrompt?: string;
}

export const TASK_PLACES = {
  session: { prefix: 'task.' },
  message: { prefix: 'message.' },
  tool: { prefix: '' },
  chat: { prefix: '', promptField: 'messages', emptyPrompt: 'messages: the user message (the task) must not be empty' },
  trigger: { prefix: '', emptyPrompt: 'prompt is required' },
} as const satisfies Record<string, TaskPlace>;

type CheckedTask = Pick<TaskParamsInput, 'prompt' | 'replayOf' | 'outputType' | 'outputSchema'>;

/** A task needs something to do: an empty or blank prompt is 400 INVALID_TASK_DETAILS, unless it replays a task (whose prompt it takes). */
export function assertPromptGiven(task: Pick<TaskParamsInput, 'prompt' | 'replayOf'>, place: TaskPlace): void {
  if (task.prompt.trim() || task.replayOf !== undefined) return;
  const field = place.promptField ?? `${place.prefix}prompt`;
  throw new ServiceError('INVALID_TASK_DETAILS', place.emptyPrompt ?? `${field} must not be empty`, { field });
}

/**
 * A structured_json task's JSON Schema is compiled on a schema thread (never on the API's
 * event loop): one that cannot be enforced is 400 INVALID_PARAMETER at submission.
 */
export async function assertOutputSchemaUsable(task: Pick<TaskParamsInput, 'outputType' | 'outputSchema'>, place: TaskPlace): Promise<void> {
  if (task.outputType !== 'structured_json' || !task.outputSchema || Array.isArray(task.outputSchema)) return;
  const problem = await outputSchemaProblem(task.outputSchema);
  if (problem) throw new InvalidParameterError(`${place.prefix}outputSchema`, null, problem);
}

/** Every check of a task, in the order a user meets them: the prompt, then the output schema. */
export async function checkTask(task: CheckedTask, place: TaskPlace): Promise<void> {
  assertPromptGiven(task, place);
  await assertOutputSchemaUsable(task, place);
}

/** A trigger's output as its runs' task asks it: `structured` is structured_json with the trigger's outputSchema. */
function triggerOutput(outputType: RunTrigger['outputType'], outputSchema: RunTrigger['outputSchema']): Pick<TaskParams, 'outputType' | 'outputSchema'> {
  return outputType === 'structured' ? { outputType: 'structured_json', outputSchema: outputSchema ?? {} } : { outputType: 'text' };
}

/** The task each run of a trigger performs: the task schema's defaults, ending its session. */
export function triggerTaskParams(trigger: Pick<RunTrigger, 'prompt' | 'startingUrl' | 'outputType' | 'outputSchema' | 'maxCost' | 'replay'>): TaskParams {
  return {
    prompt: trigger.prompt,
    startingUrl: trigger.startingUrl,
    maxDuration: TASK_LIMITS.maxDuration.default,
    maxInputTokens: TASK_LIMITS.maxInputTokens.default,
    maxOutputTokens: TASK_LIMITS.maxOutputTokens.default,
    terminateOnCompletion: true,
    ...triggerOutput(trigger.outputType, trigger.outputSchema),
    files: [],
    ...(trigger.maxCost !== undefined ? { maxCost: trigger.maxCost } : {}),
    ...(trigger.replay ? { replay: trigger.replay } : {}),
  };
}

/**
 * A trigger's task is checked as every other task, as its runs will perform it: the fields
 * a create or an update gives (stored form: the outputSchema as JSON text), each when given.
 */
export async function checkTriggerTask(fields: Partial<Pick<CronJobFields, 'prompt' | 'outputType' | 'outputSchema'>>): Promise<void> {
  if (fields.prompt !== undefined) assertPromptGiven({ prompt: fields.prompt }, TASK_PLACES.trigger);
  if (fields.outputType === undefined) return;
  const outputSchema = fields.outputSchema ? (JSON.parse(fields.outputSchema) as Record<string, unknown>) : null;
  await assertOutputSchemaUsable(triggerOutput(fields.outputType, outputSchema), TASK_PLACES.trigger);
}
