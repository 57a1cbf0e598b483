/**
 * Domain rules at the network: while the agent acts, a main-frame navigation to a domain
 * the session's policy does not allow (a redirect, a form posting elsewhere, a script) is
 * aborted before its request leaves. A human in manual control is not policed: the agent
 * is not acting then. Other requests fall through to any other route of the context.
 */
import type { BrowserContext, Page, Request, Route } from 'playwright-core';
import type { CompiledPolicy } from './policy';

export interface NavigationGuardState {
  policy: CompiledPolicy | null;
  /** The agent is in a step (observing, deciding or acting). */
  acting: boolean;
  /** Navigations refused since the last look, with why. */
  refused: { url: string; reason: string }[];
}

const guarded = new WeakMap<BrowserContext, NavigationGuardState>();

function isMainFrameNavigation(req: Request): boolean {
  try {
    return req.isNavigationRequest() && req.frame().parentFrame() === null;
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
    if (!state.acting || !policy?.restrictsDomains || !isMainFrameNavigation(req)) return route.fallback();
    const decision = policy.checkUrl(req.url());
    if (decision.effect !== 'block') return route.fallback();
    state.refused.push({ url: req.url(), reason: decision.reason });
    return route.abort('blockedbyclient');
  });
  return state;
}

/**
 * What the model is told of navigations refused during an action (empty when none). A
 * refused main-frame navigation leaves Chromium's error page: the tab goes back to the
 * page the action started on.
 */
export async function reportRefusals(state: NavigationGuardState | undefined, page: Page): Promise<string> {
  const refused = state?.refused.splice(0) ?? [];
  if (!refused.length) return '';
  let note = ` (the page tried to open ${refused.map((r) => r.url).join(', ')}, which was blocked: ${refused[0].reason}`;
  if (page.url().startsWith('chrome-error:')) {
    await page.goBack({ waitUntil: 'domcontentloaded', timeout: 5_000 }).catch(() => null);
    note += `; the tab is back on ${page.url()}`;
  }
  return `${note})`;
}
