/**
 * Domain rules at the network: any navigation of any frame (the tab, an iframe, a popup) to
 * a domain the session's policy does not allow (a link, a redirect, a form posting
 * elsewhere, a script, a timer) is aborted before its request leaves, at all times: while
 * the agent acts, between its steps, during waits and between tasks. Other requests fall
 * through to any other route of the context.
 */
import type { BrowserContext, Page, Request, Route } from 'playwright-core';
import type { CompiledPolicy } from './policy';

export interface NavigationGuardState {
  policy: CompiledPolicy | null;
  /** The agent is in a step (observing, deciding or acting); navigations are refused whether it is or not. */
  acting: boolean;
  /** Navigations refused since the last look, with why. */
  refused: { url: string; reason: string }[];
}

const guarded = new WeakMap<BrowserContext, NavigationGuardState>();

function isNavigation(req: Request): boolean {
  try {
    return req.isNavigationRequest();
  } catch {
    return false; // service worker requests have no frame
  }
}

/** Installs the guard on the context once; later calls share and answer its state. */
export async function guardNavigations(context: BrowserContext): Promise<NavigationGuardState> {
  const existing = guarded.get(context);
  if (existing) return existing;
  const state: NavigationGuardState = { policy: null, acting: false, refused: [] };
  guarded.set(context, state);
  await context.route('**/*', async (route: Route) => {
    const req = route.request();
    const policy = state.policy;
    if (!policy?.restrictsDomains || !isNavigation(req)) return route.fallback();
    const decision = policy.checkUrl(req.url());
    if (decision.effect !== 'block') return route.fallback();
    state.refused.push({ url: req.url(), reason: decision.reason });
    await route.abort('blockedbyclient');
    // Refused between steps (a timer, a redirect while nobody acts): the tab is taken back off Chromium's error page.
    if (!state.acting) recoverLater(req);
  });
  return state;
}

function recoverLater(req: Request): void {
  let page: Page;
  try {
    if (req.frame().parentFrame() !== null) return;
    page = req.frame().page();
  } catch {
    return;
  }
  setTimeout(() => {
    if (page.isClosed() || !page.url().startsWith('chrome-error:')) return;
    page.goBack({ waitUntil: 'domcontentloaded', timeout: 5_000 }).catch(() => null);
  }, 300).unref();
}

/**
 * What the model is told of navigations refused during an action (empty when none). A
 * refused main-frame navigation leaves Chromium's error page: the tab goes back to the
 * page the action started on.
 */
export async function reportRefusals(state: NavigationGuardState | undefined, page: Page): Promise<string> {
  const refused = state?.refused.splice(0) ?? [];
  if (!refused.length) return '';
  let note = ` (the page tried to open ${refused.map((refusal) => refusal.url).join(', ')}, which was blocked: ${refused[0].reason}`;
  if (page.url().startsWith('chrome-error:')) {
    await page.goBack({ waitUntil: 'domcontentloaded', timeout: 5_000 }).catch(() => null);
    note += `; the tab is back on ${page.url()}`;
  }
  return `${note})`;
}
