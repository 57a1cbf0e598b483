import { z } from 'zod';
import { elementText } from '../policy/action-facts';
import type { AgentTool, ToolContext } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';
import { ACTION_TIMEOUT_MS, targetElement } from './element-target';

const schema = z.object({
  direction: z.enum(['up', 'down']).describe('Which way to scroll'),
  amount: z.number().min(0.1).max(10).default(1).describe('How far, in pages (viewport heights); default 1'),
  index: z.number().int().min(1).optional().describe('Instead of scrolling by pages, bring the element with this [index] into view'),
});

interface ScrollResult {
  container: 'page' | 'element';
  moved: number;
  position: number;
  height: number;
  viewport: number;
}

/**
 * Scrolls the document, or when the document cannot move (app layouts with an inner scrolling
 * pane), the largest scrollable box in view. Runs in the page: self-contained.
 */
function scrollInPage(pages: number): ScrollResult {
  const doc = (document.scrollingElement ?? document.documentElement) as HTMLElement;
  const before = doc.scrollTop;
  window.scrollBy({ top: pages * window.innerHeight, behavior: 'instant' });
  if (Math.abs(doc.scrollTop - before) >= 1) {
    return { container: 'page', moved: doc.scrollTop - before, position: doc.scrollTop, height: doc.scrollHeight, viewport: window.innerHeight };
  }
  let best: Element | null = null;
  let bestArea = 0;
  for (const el of Array.from(document.querySelectorAll('*'))) {
    if (el.scrollHeight <= el.clientHeight + 1) continue;
    const overflow = getComputedStyle(el).overflowY;
    if (overflow !== 'auto' && overflow !== 'scroll' && overflow !== 'overlay') continue;
    const box = el.getBoundingClientRect();
    const area = Math.max(0, Math.min(box.right, window.innerWidth) - Math.max(box.left, 0)) * Math.max(0, Math.min(box.bottom, window.innerHeight) - Math.max(box.top, 0));
    if (area > bestArea) {
      best = el;
      bestArea = area;
    }
  }
  if (!best) return { container: 'page', moved: 0, position: doc.scrollTop, height: doc.scrollHeight, viewport: window.innerHeight };
  const start = best.scrollTop;
  best.scrollBy({ top: pages * best.clientHeight, behavior: 'instant' });
  return { container: 'element', moved: best.scrollTop - start, position: best.scrollTop, height: best.scrollHeight, viewport: best.clientHeight };
}

/** The items of lists on the page (what an infinite list adds to). */
const ITEMS = 'li, article, tr, [role=listitem], [role=row], [role=article]';

/** Siblings of one tag and class that make a list of boxes (reviews, cards) when at least this many. */
const MIN_SIBLINGS = 3;

/**
 * The items of the page's lists: list elements, and boxes of one tag and class side by side
 * (a review list of <div class="review">). Runs in the page.
 */
function itemsInPage({ items, min }: { items: string; min: number }): number {
  let count = document.querySelectorAll(items).length;
  const groups = new Map<Element, Map<string, number>>();
  for (const el of Array.from(document.querySelectorAll('div[class], section[class]'))) {
    const parent = el.parentElement;
    if (!parent) continue;
    const byKey = groups.get(parent) ?? new Map<string, number>();
    const key = `${el.tagName}.${el.className}`;
    byKey.set(key, (byKey.get(key) ?? 0) + 1);
    groups.set(parent, byKey);
  }
  for (const byKey of groups.values()) for (const n of byKey.values()) if (n >= min) count += n;
  return count;
}

/** How long a scroll waits for a list to load more items. */
const LOAD_WAIT_MS = 1_500;

export async function countItems(ctx: ToolContext): Promise<number> {
  return abortable(ctx.page.evaluate(itemsInPage, { items: ITEMS, min: MIN_SIBLINGS }), ctx.signal).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    return 0;
  });
}

/** How many items the lists of the page gained after a scroll (an infinite list loading more): 0 when none within LOAD_WAIT_MS. */
async function itemsAdded(ctx: ToolContext, before: number): Promise<number> {
  try {
    // (the page counts as countItems does: the function's own source, called with its arguments)
    const grew = `(${itemsInPage.toString()})(${JSON.stringify({ items: ITEMS, min: MIN_SIBLINGS })}) > ${before}`;
    await abortable(ctx.page.waitForFunction(grew, undefined, { timeout: LOAD_WAIT_MS, polling: 100 }), ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return 0;
  }
  // The list may still be adding its batch: counted once it holds still.
  await new Promise((resolve) => setTimeout(resolve, 150));
  return Math.max(0, (await countItems(ctx)) - before);
}

/** `; 20 more items loaded` when lists of the page grew after the scroll, else ''. */
async function itemsLoaded(ctx: ToolContext, before: number): Promise<string> {
  const added = await itemsAdded(ctx, before);
  return added > 0 ? `; ${added} more item${added === 1 ? '' : 's'} loaded` : '';
}

/**
 * Scrolls to the end of what is loaded (the page, or its scrolling pane) and waits for an
 * infinite list to load more: the items it gained, 0 when it loaded none. `counted`: the
 * items the page holds, when the caller has just counted them.
 */
export async function loadMore(ctx: ToolContext, counted?: number): Promise<number> {
  const before = counted ?? (await countItems(ctx));
  await attempt(ctx.signal, 'Scrolling', () => abortable(ctx.page.evaluate(scrollInPage, 1000), ctx.signal));
  return itemsAdded(ctx, before);
}

export const scrollTool: AgentTool<typeof schema, 'scroll'> = {
  name: 'scroll',
  description: 'Scroll the page up or down by pages, or bring an element into view by its [index].',
  schema,
  async execute(ctx, { direction, amount, index }) {
    if (index !== undefined) {
      const { locator, target, name } = await targetElement(ctx, index);
      await attempt(ctx.signal, `Scrolling to ${name}`, () => abortable(locator.scrollIntoViewIfNeeded({ timeout: ACTION_TIMEOUT_MS }), ctx.signal));
      return { summary: `Scrolled ${name} into view`, target };
    }
    const pages = direction === 'down' ? amount : -amount;
    const itemsBefore = direction === 'down' ? await countItems(ctx) : 0;
    const scrolled = await attempt(ctx.signal, 'Scrolling', () => abortable(ctx.page.evaluate(scrollInPage, pages), ctx.signal));
    // Near the end of what is loaded, an infinite list loads more.
    const nearEnd = scrolled.height - (scrolled.position + scrolled.viewport) < scrolled.viewport;
    const loaded = direction === 'down' && itemsBefore > 0 && nearEnd ? await itemsLoaded(ctx, itemsBefore) : '';
    const what = scrolled.container === 'page' ? 'the page' : 'the scrollable area';
    const where = `now at ${Math.round(scrolled.position)}px of ${scrolled.height}px (viewport ${scrolled.viewport}px)`;
    if (Math.abs(scrolled.moved) < 1) {
      return { summary: `Could not scroll ${direction}: ${what} is already at the ${direction === 'down' ? 'bottom' : 'top'}; ${where}${loaded}`, target: 'page' };
    }
    const pagesMoved = Math.abs(scrolled.moved) / scrolled.viewport;
    return { summary: `Scrolled ${what} ${direction} by ${pagesMoved.toFixed(pagesMoved % 1 ? 1 : 0)} page(s); ${where}${loaded}`, target: 'page' };
  },
  // The element it brings into view, if any.
  async policyFacts(request) {
    return { texts: await elementText(request) };
  },
  recording: { index: 'element' },
  playwright(a, { on }) {
    if (on) return [`await ${on}.scrollIntoViewIfNeeded();`];
    const pages = Math.min(Math.max(Number(a.amount ?? 1) || 1, 0.1), 10);
    return [`await page.mouse.wheel(0, ${a.direction === 'up' ? -pages : pages} * (page.viewportSize()?.height ?? 720));`];
  },
};
