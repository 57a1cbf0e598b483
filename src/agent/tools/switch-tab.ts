import { z } from 'zod';
import type { AgentTool } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';

const schema = z.object({ index: z.number().int().min(0).describe('The [index] of the tab, as listed under "Tabs" in the observation') });

export const switchTabTool: AgentTool<typeof schema, 'switch_tab'> = {
  name: 'switch_tab',
  description: 'Make another open tab the active one, by its tab index.',
  schema,
  async execute(ctx, { index }) {
    const pages = ctx.context.pages();
    const page = pages[index];
    if (!page) throw new Error(`There is no tab ${index}; the open tabs are 0 to ${pages.length - 1}`);
    const title = await page.title().catch(() => '');
    const named = `tab [${index}]${title ? ` "${title}"` : ''}`;
    if (page === ctx.page) {
      // Nothing to switch: a small model switched to the tab it was on eight times, the answer in view.
      return { summary: `Not switched: ${named} is already the active tab, and the observation is that page. Read what you need there (or use extract), then act on it or call done.`, target: page.url(), unchanged: true };
    }
    await attempt(ctx.signal, `Switching to tab ${index}`, () => abortable(page.bringToFront(), ctx.signal));
    ctx.setActivePage(page);
    return { summary: `Switched to ${named} (${page.url()})`, target: page.url() };
  },
  // The address of the tab it makes active.
  async policyFacts({ ctx, args }) {
    return { texts: [ctx.context.pages()[Number(args.index)]?.url() ?? ''] };
  },
  recording: { index: 'tab' },
  playwright: (a) => [`page = await tab(page, ${Number(a.index) || 0});`],
};
