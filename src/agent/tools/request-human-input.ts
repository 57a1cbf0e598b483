import { z } from 'zod';
import type { AgentTool } from '../types';

const schema = z.object({
  type: z
    .string()
    .min(1)
    .default('human_input_needed')
    .describe('What kind of help: human_input_needed, captcha, two_factor_code, credentials or approval'),
  value: z.string().min(1).describe('What you need from the human, as a question or instruction they can act on'),
});

export const requestHumanInputTool: AgentTool<typeof schema, 'request_human_input'> = {
  name: 'request_human_input',
  description:
    'Pause and ask the human for something only they can give: a one-time code, a password, solving a CAPTCHA, an approval. Their answer comes in the next message.',
  schema,
  async execute(_ctx, { type, value }) {
    return { summary: `Asked the human (${type}): ${value}`, target: type, humanInput: { type, value } };
  },
  // What it asks the human for.
  async policyFacts({ args }) {
    return { texts: [String(args.value ?? '')] };
  },
  recording: { index: 'none' },
  playwright: () => ['// The agent asked a person for help here; do what they did before going on.'],
};
