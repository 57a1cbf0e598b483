import type { Page, Request } from 'playwright-core';
import { TaskFailure } from '../../contracts/errors';
import { isPublicName, REFUSAL_MESSAGE, REFUSED_ADDRESS } from '../../net/network-guard';
import type { ToolContext } from '../types';

/** The session's refusals, looked up by host and port (a refused image on another port of the same host is not the page's). */
type Refusals = { refusalOf(host: string, since: number, port?: number): { host: string; reason: string; byGuard?: boolean } | undefined };

/** A navigation request of the page's main frame (a service worker's request has no frame). */
export function isNavigationOf(request: Request, page: Page): boolean {
  if (!request.isNavigationRequest() || request.serviceWorker()) return false;
  try {
    return request.frame() === page.mainFrame();
  } catch {
    return false;
  }
}

/**
 * Watches the main-frame navigations of `page` during an action, and answers whether one of
 * them (the first request or any redirect hop) was refused by the network guard. A refused
 * navigation is an action failure the model sees (code NAVIGATION_BLOCKED, so a starting URL
 * that is refused fails the task with it, `details.url` naming the refused hop); a refused
 * sub-resource (image, script, fetch, frame, WebSocket) simply fails to load, and the page
 * and the task go on: a refusal counts only for the host and port of a navigation.
 */
export function watchBlockedNavigation(ctx: ToolContext, page: Page): { stop(): void; check(): void } {
  const since = Date.now();
  const hosts: { url: string; host: string; port: number; request: Request }[] = [];
  const onRequest = (request: Request) => {
    if (!isNavigationOf(request, page)) return;
    try {
      const url = new URL(request.url());
      if (url.protocol === 'http:' || url.protocol === 'https:') hosts.push({ url: `${url.origin}${url.pathname}`, host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)), request });
    } catch {
      /* not a URL the guard sees */
    }
  };
  // On the context (kept subscribed by the session's request log), not the page: see actAndSettle.
  ctx.context.on('request', onRequest);
  return {
    stop: () => ctx.context.off('request', onRequest),
    check: () => {
      const egress = ctx.egress as Refusals | undefined;
      if (!egress) return;
      for (const navigation of hosts) {
        // Stopped in the browser by the policy's domain rules (which say so themselves): whatever Chromium
        // sent ahead to that host (a preconnect the guard refused) is not this navigation's refusal.
        if (navigation.request.failure()?.errorText === 'net::ERR_BLOCKED_BY_CLIENT') continue;
        const refusal = egress.refusalOf(navigation.host, since, navigation.port);
        if (refusal) throw blockedNavigation(navigation.url, isPublicName(navigation.host) ? { refusedByGuard: refusal.byGuard === true } : {});
      }
    },
  };
}

/**
 * The same words for every address not reached (why is in the operator's log): the address
 * itself in `details.url`; for a public name also `refusedByGuard` (false: it did not resolve
 * or could not be looked up, as when the service is offline).
 */
export function blockedNavigation(url: string, said: { refusedByGuard?: boolean } = {}): TaskFailure {
  return new TaskFailure('NAVIGATION_BLOCKED', REFUSAL_MESSAGE, { url, reason: REFUSED_ADDRESS, ...said });
}
