import type { CDPSession, Page, Request } from 'playwright-core';
import type { ToolContext } from '../types';
import { abortable, sleep } from './abort';
import { watchBlockedNavigation } from './guard-check';

/** Time for a navigation request or a new tab to show up after an input event. */
const GRACE_MS = 150;
/** How long a started navigation may take to reach DOMContentLoaded before the agent moves on. */
const SETTLE_MS = 5_000;

/**
 * Chromium announces a window it is about to open (window.open, a target=_blank link, a form
 * aimed at a new window) on the opener's DevTools session, before the new tab exists. One
 * session per page, opened on first use, lets an action know a tab is coming even when the
 * machine is too busy for the tab to appear within the grace period.
 */
const windowOpenWatch = new WeakMap<Page, Promise<{ opened: number } | null>>();

function watchWindowOpen(ctx: ToolContext, page: Page): Promise<{ opened: number } | null> {
  let watch = windowOpenWatch.get(page);
  if (!watch) {
    watch = (async () => {
      const state = { opened: 0 };
      try {
        const cdp: CDPSession = await ctx.context.newCDPSession(page);
        cdp.on('Page.windowOpen', () => (state.opened += 1));
        await cdp.send('Page.enable');
        return state;
      } catch {
        return null; // a closed page or a browser without DevTools sessions: the grace period alone decides
      }
    })();
    windowOpenWatch.set(page, watch);
  }
  return watch;
}

export interface NavigationOutcome {
  /** A tab the action opened; it is now the active page. */
  newPage?: Page;
  /** The active tab started loading another document. */
  navigated: boolean;
}

/**
 * Runs an input action and waits for what it set off: a new tab becomes the active page, and a
 * navigation of the active tab is given a few seconds to reach DOMContentLoaded (never network
 * idle: pages that keep polling would hold the agent forever). Waiting stops on abort.
 */
export async function actAndSettle<T>(ctx: ToolContext, action: () => Promise<T>): Promise<{ result: T } & NavigationOutcome> {
  const page = ctx.page;
  let navigated = false;
  let newPage: Page | undefined;
  let markLoaded = () => {};
  const loaded = new Promise<void>((resolve) => (markLoaded = resolve));
  const onRequest = (r: Request) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) navigated = true;
  };
  let markOpened = () => {};
  const opened = new Promise<void>((resolve) => (markOpened = resolve));
  const onPage = (p: Page) => {
    newPage ??= p;
    markOpened();
  };
  page.on('request', onRequest);
  page.on('domcontentloaded', markLoaded);
  ctx.context.on('page', onPage);
  const guard = watchBlockedNavigation(ctx, page);
  const windows = await watchWindowOpen(ctx, page);
  const openedBefore = windows?.opened ?? 0;
  try {
    const result = await action();
    await sleep(GRACE_MS, ctx.signal);
    if (!newPage && windows && windows.opened > openedBefore) {
      // a tab is on its way: wait for it (bounded) rather than leave the agent on the old tab
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_MS)));
      await abortable(Promise.race([opened, timeout]), ctx.signal).finally(() => clearTimeout(timer));
    }
    if (newPage) {
      ctx.setActivePage(newPage);
      await abortable(newPage.waitForLoadState('domcontentloaded', { timeout: SETTLE_MS }), ctx.signal).catch(rethrowAbort(ctx));
      return { result, newPage, navigated };
    }
    if (navigated) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_MS)));
      await abortable(Promise.race([loaded, timeout]), ctx.signal).finally(() => clearTimeout(timer));
      guard.check();
    }
    return { result, navigated };
  } finally {
    guard.stop();
    page.off('request', onRequest);
    page.off('domcontentloaded', markLoaded);
    ctx.context.off('page', onPage);
  }
}

/** A slow new tab is fine (the observation waits for it); a stopped task is not. */
const rethrowAbort = (ctx: ToolContext) => (err: unknown) => {
  if (ctx.signal.aborted) throw err;
};

/** The end of an action summary: where the agent is now, when the action took it elsewhere. */
export function outcomeNote(ctx: ToolContext, urlBefore: string, outcome: NavigationOutcome): string {
  if (outcome.newPage) {
    const index = ctx.context.pages().indexOf(outcome.newPage);
    return `; it opened a new tab [${index}] ${outcome.newPage.url()}, which is now the active tab`;
  }
  const url = ctx.page.url();
  return outcome.navigated || url !== urlBefore ? `; page is now ${url}` : '';
}
