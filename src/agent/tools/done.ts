import { z } from 'zod';
import type { TaskParams } from '../../contracts/session-types';
import type { LlmToolSpec } from '../llm/types';
import type { AgentTool } from '../types';

const schema = z
  .object({
    message: z.string().optional().describe('The final answer or result of the task, in the format the task asked for'),
    /** structured_json: the result document itself, matching the task's outputSchema. */
    result: z.unknown().optional(),
    /** structured_csv: the rows, one object per row keyed by the task's columns. */
    rows: z.array(z.record(z.string(), z.unknown())).optional(),
    success: z.boolean().default(true).describe('false when the task could not be completed; say why in message'),
  })
  .refine((answer) => answer.message !== undefined || answer.result !== undefined || answer.rows !== undefined, { message: 'give the answer in message (or result / rows for structured output)' });

export const doneTool: AgentTool<typeof schema, 'done'> = {
  name: 'done',
  description: 'Finish the task with its final answer.',
  schema,
  async execute(_ctx, { message, result, rows, success }) {
    // A structured answer given as a value is checked and written out (JSON or CSV) by the agent.
    const text = success && result !== undefined ? JSON.stringify(result) : success && rows !== undefined ? JSON.stringify(rows) : (message ?? '');
    return { summary: success ? 'Task finished' : 'Task given up', target: success ? 'success' : 'failure', done: { message: text, success } };
  },
  async policyFacts() {
    return {};
  },
  recording: { index: 'none' },
  playwright: () => ['// The task ended here.'],
};

const successSpec = { type: 'boolean', default: true, description: 'false when the task could not be completed; then say why in message' };

/**
 * The done tool as the model sees it for this task: the caller's output format is its
 * parameters, so the model answers in that shape (a JSON Schema for structured_json, rows
 * with the caller's columns for structured_csv) rather than describing it in prose.
 */
export function doneSpec(params: Pick<TaskParams, 'outputType' | 'outputSchema'>): LlmToolSpec {
  const base = { name: doneTool.name, description: doneTool.description };
  if (params.outputType === 'structured_json' && params.outputSchema && !Array.isArray(params.outputSchema)) {
    const { $schema: _dialect, ...resultSchema } = params.outputSchema as Record<string, unknown>;
    return {
      ...base,
      description: 'Finish the task. On success give the result in `result`, matching its schema exactly; if the task cannot be completed, set success=false and say why in `message`.',
      parameters: {
        type: 'object',
        properties: { result: { ...resultSchema, description: 'The result of the task' }, success: successSpec, message: { type: 'string', description: 'Only when success is false: why the task could not be completed' } },
      },
    };
  }
  if (params.outputType === 'structured_csv' && Array.isArray(params.outputSchema) && params.outputSchema.length) {
    const columns = params.outputSchema.map(String);
    const cell = { type: ['string', 'number', 'boolean', 'null'] };
    return {
      ...base,
      description: `Finish the task. On success give the result as \`rows\`, one object per row with the columns ${columns.join(', ')}; the service writes the CSV. If the task cannot be completed, set success=false and say why in \`message\`.`,
      parameters: {
        type: 'object',
        properties: {
          rows: { type: 'array', items: { type: 'object', properties: Object.fromEntries(columns.map((column) => [column, cell])), additionalProperties: false } },
          success: successSpec,
          message: { type: 'string', description: 'Only when success is false: why the task could not be completed' },
        },
      },
    };
  }
  return {
    ...base,
    parameters: { type: 'object', properties: { message: { type: 'string', description: 'The final answer or result of the task, as markdown text' }, success: successSpec }, required: ['message'] },
  };
}
