import { errors } from 'playwright-core';
import { z } from 'zod';
import type { AgentTool } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';

const schema = z.object({});

export const goBackTool: AgentTool<typeof schema, 'go_back'> = {
  name: 'go_back',
  description: 'Go back to the previous page of the active tab, like the browser\'s back button.',
  schema,
  async execute(ctx) {
    const before = ctx.page.url();
    const timeout = ctx.navigationTimeoutMs;
    const response = await attempt(ctx.signal, 'Going back', async () => {
      try {
        return await abortable(ctx.page.goBack({ waitUntil: 'domcontentloaded', timeout }), ctx.signal);
      } catch (err) {
        // Unlike navigate, a slow previous page is the model's to handle: it may wait or go elsewhere.
        if (err instanceof errors.TimeoutError) throw new Error(`the previous page did not load within ${timeout} ms`);
        throw err;
      }
    });
    const url = ctx.page.url();
    if (!response && url === before) throw new Error('Going back failed: there is no previous page in this tab');
    return { summary: `Went back; page is now ${url}`, target: url };
  },
  async policyFacts() {
    return {};
  },
  recording: { index: 'none' },
  playwright: () => ['await page.goBack();'],
};
