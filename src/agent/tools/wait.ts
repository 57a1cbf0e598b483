import { z } from 'zod';
import type { AgentTool } from '../types';
import { sleep } from './abort';

const schema = z.object({ seconds: z.number().min(0.1).max(10).describe('How long to wait, 0.1 to 10 seconds') });

export const waitTool: AgentTool<typeof schema, 'wait'> = {
  name: 'wait',
  description: 'Wait a moment for the page to finish loading or updating.',
  schema,
  async execute(ctx, { seconds }) {
    await sleep(seconds * 1000, ctx.signal);
    return { summary: `Waited ${seconds} s`, target: `${seconds} s` };
  },
  async policyFacts() {
    return {};
  },
  recording: { index: 'none' },
  playwright: (a) => [`await page.waitForTimeout(${Math.min(Math.max(Number(a.seconds ?? 1), 0), 30) * 1000});`],
};
