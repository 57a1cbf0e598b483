import type { CDPSession, Page, Request } from 'playwright-core';
import type { ToolContext } from '../types';
import { abortable, sleep } from './abort';
import { isNavigationOf, watchBlockedNavigation } from './guard-check';

/**
 * Only without a DevTools session on the page (the announcements below): time for a
 * navigation request or a new tab to show up after an input event.
 */
const GRACE_MS = 150;
/** How long a started navigation may take to reach DOMContentLoaded before the agent moves on. */
const SETTLE_MS = 5_000;

/**
 * Chromium announces what an input event set off on the page's DevTools session before it
 * shows up as a request or a tab: a window about to open (window.open, a target=_blank link, a
 * form aimed at a new window) and a navigation the page asked for (a link, a form submission,
 * a script). One session per page, opened on first use, lets an action know a tab or a new
 * document is coming even when the machine is too busy for it to appear within the grace period.
 */
interface PageAnnouncements {
  opened: number;
  /** Navigations of the main frame in the same tab that the page requested. */
  requested: number;
  /** Called when the main frame stops loading (a document loaded, a download, a cancelled navigation). */
  stopped: Set<() => void>;
  /** A round trip through the renderer: tasks the input event queued before it have run by its end. */
  roundTrip(): Promise<void>;
}

const announcements = new WeakMap<Page, Promise<PageAnnouncements | null>>();

function watchAnnouncements(ctx: ToolContext, page: Page): Promise<PageAnnouncements | null> {
  let watch = announcements.get(page);
  if (!watch) {
    watch = (async () => {
      try {
        const cdp: CDPSession = await ctx.context.newCDPSession(page);
        const main = { frameId: '' };
        const state: PageAnnouncements = {
          opened: 0,
          requested: 0,
          stopped: new Set(),
          roundTrip: async () => {
            await cdp.send('Runtime.evaluate', { expression: 'new Promise((r) => setTimeout(r, 0))', awaitPromise: true }).catch(() => undefined);
          },
        };
        cdp.on('Page.windowOpen', () => (state.opened += 1));
        cdp.on('Page.frameRequestedNavigation', (event) => {
          if (event.frameId === main.frameId && event.disposition === 'currentTab') state.requested += 1;
        });
        cdp.on('Page.frameStoppedLoading', (event) => {
          if (event.frameId === main.frameId) for (const fn of state.stopped) fn();
        });
        await cdp.send('Page.enable');
        main.frameId = (await cdp.send('Page.getFrameTree')).frameTree.frame.id;
        return state;
      } catch {
        return null; // a closed page or a browser without DevTools sessions: the grace period alone decides
      }
    })();
    announcements.set(page, watch);
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
  const onRequest = (request: Request) => {
    if (isNavigationOf(request, page)) navigated = true;
  };
  let markOpened = () => {};
  const opened = new Promise<void>((resolve) => (markOpened = resolve));
  const onPage = (tab: Page) => {
    newPage ??= tab;
    markOpened();
  };
  // On the context, which the session's request log keeps subscribed: a listener on the page
  // would subscribe and unsubscribe it with a DevTools message each, every step.
  ctx.context.on('request', onRequest);
  page.on('domcontentloaded', markLoaded);
  ctx.context.on('page', onPage);
  const guard = watchBlockedNavigation(ctx, page);
  const announced = await watchAnnouncements(ctx, page);
  const openedBefore = announced?.opened ?? 0;
  const requestedBefore = announced?.requested ?? 0;
  announced?.stopped.add(markLoaded);
  const seen = () => newPage || navigated || (announced && (announced.opened > openedBefore || announced.requested > requestedBefore));
  try {
    const result = await action();
    // No fixed wait: one round trip through the renderer runs what the input event queued (a
    // submission, a script's navigation or window.open), and Chromium announces a navigation
    // or a window before it answers the round trip. Only a page without announcements waits.
    if (announced) await bounded(announced.roundTrip(), ctx);
    else await sleep(GRACE_MS, ctx.signal);
    // What the page announced but has not shown yet (the request, the tab) is waited for below.
    if (!seen() && announced) await bounded(announced.roundTrip(), ctx);
    if (announced && announced.requested > requestedBefore) navigated = true;
    // a tab is on its way: wait for it (bounded) rather than leave the agent on the old tab
    if (!newPage && announced && announced.opened > openedBefore) await bounded(opened, ctx);
    if (newPage) {
      ctx.setActivePage(newPage);
      await abortable(newPage.waitForLoadState('domcontentloaded', { timeout: SETTLE_MS }), ctx.signal).catch(rethrowAbort(ctx));
      return { result, newPage, navigated };
    }
    if (navigated) {
      await bounded(loaded, ctx);
      guard.check();
    }
    return { result, navigated };
  } finally {
    announced?.stopped.delete(markLoaded);
    guard.stop();
    ctx.context.off('request', onRequest);
    page.off('domcontentloaded', markLoaded);
    ctx.context.off('page', onPage);
  }
}

/** Waits for `promise` at most SETTLE_MS; a stopped task ends the wait at once. */
async function bounded(promise: Promise<unknown>, ctx: ToolContext): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_MS)));
  await abortable(Promise.race([promise, timeout]), ctx.signal).finally(() => clearTimeout(timer));
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
