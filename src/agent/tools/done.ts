import { z } from 'zod';
import type { AgentTool } from '../types';

const schema = z.object({
  message: z.string().describe('The final answer or result of the task, in the format the task asked for'),
  success: z.boolean().default(true).describe('false when the task could not be completed; say why in message'),
});

export const doneTool: AgentTool<typeof schema> = {
  name: 'done',
  description: 'Finish the task with its final answer.',
  schema,
  async execute(_ctx, { message, success }) {
    return { summary: success ? 'Task finished' : 'Task given up', target: success ? 'success' : 'failure', done: { message, success } };
  },
};
