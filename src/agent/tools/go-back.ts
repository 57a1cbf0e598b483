import { errors } from 'playwright-core';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import type { AgentTool, ToolContext } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';

const schema = z.object({});

/**
 * The address the back button would open, read from the tab's history without moving: a tab
 * opens on about:blank before its first page, and going back there leaves the site for a blank
 * page. Undefined when the history cannot be read (the back button then decides).
 */
async function previousEntry(ctx: ToolContext, page: Page): Promise<string | null | undefined> {
  let cdp;
  try {
    cdp = await ctx.context.newCDPSession(page);
    const history = await cdp.send('Page.getNavigationHistory');
    return history.currentIndex > 0 ? history.entries[history.currentIndex - 1].url : null;
  } catch {
    return undefined;
  } finally {
    await cdp?.detach().catch(() => undefined);
  }
}

/** Said when the tab has no page to go back to. */
export const NO_EARLIER_PAGE = 'there is no earlier page in this tab';

export const goBackTool: AgentTool<typeof schema, 'go_back'> = {
  name: 'go_back',
  description: 'Go back to the previous page of the active tab, like the browser\'s back button.',
  schema,
  async execute(ctx) {
    const before = ctx.page.url();
    const previous = await previousEntry(ctx, ctx.page);
    if (previous === null || (previous === 'about:blank' && before !== 'about:blank')) {
      throw new Error(`Going back failed: ${NO_EARLIER_PAGE}; it opened at ${before}. The observation is this page.`);
    }
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
    if (!response && url === before) throw new Error('Going back failed: there is no earlier page in this tab');
    return { summary: `Went back; page is now ${url}`, target: url };
  },
  async policyFacts() {
    return {};
  },
  recording: { index: 'none' },
  playwright: () => ['await page.goBack();'],
};
