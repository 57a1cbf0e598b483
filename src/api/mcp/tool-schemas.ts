/**
 * Input schemas of the MCP tools, taken from the REST API's zod schemas so both validate
 * the same fields the same way.
 */
import { z } from 'zod';
import { stateMessageSchema } from '../../contracts/schemas/message.schema';
import { startSessionSchema } from '../../contracts/schemas/session.schema';
import { taskParamsFields } from '../../contracts/schemas/task.schema';

const sessionId = z.string().min(1).describe('The session (from create_session or browser_task)');
const taskFields = taskParamsFields.pick({ startingUrl: true, outputType: true, outputSchema: true, maxDuration: true, maxInputTokens: true, maxOutputTokens: true, maxCost: true, files: true });
// Required, and not blank: a blank prompt is the task check's INVALID_TASK_DETAILS, as on every door.
const prompt = z.string().max(50_000).meta({ pattern: '\\S' }).describe('What the agent should do, not blank');

export const browserTaskInput = taskFields.extend({
  prompt,
  environmentId: startSessionSchema.shape.environmentId,
});

export const createSessionInput = startSessionSchema.pick({ environmentId: true, profileId: true, policyId: true }).extend({
  // Left out, the session's default applies silently; given, it needs a chat connection.
  reachOutMode: z.enum(['off', 'guardrail_only', 'full']).optional().describe('Who is told when the agent needs a human: off, guardrail_only (default), full; needs an environment with a chat connection'),
});

export const sendTaskInput = taskFields.extend({ sessionId, prompt });

export const getTaskStatusInput = z.object({ sessionId, taskId: z.string().min(1).describe('The task') });

export const controlSessionInput = z.object({ sessionId, action: stateMessageSchema.shape.newState.describe('pause, resume or stop the task; terminate ends the session') });

export const takeOverInput = z.object({ sessionId, action: z.enum(['take_over', 'release']).describe('take_over pauses the agent for manual control; release hands it back') });

export function mcpToolInputSchemas(): Record<string, z.ZodObject> {
  return {
    browser_task: browserTaskInput,
    create_session: createSessionInput,
    send_task_to_session: sendTaskInput,
    get_task_status: getTaskStatusInput,
    control_session: controlSessionInput,
    take_over_control: takeOverInput,
  };
}
