import type { Page, Request } from 'playwright-core';
import { TaskFailure } from '../../errors';
import type { ToolContext } from '../types';

/**
 * Watches the main-frame navigations of `page` during an action, and answers whether one of
 * them (the first request or any redirect hop) was refused by the network guard. A refused
 * navigation is an action failure the model sees (code NAVIGATION_BLOCKED, so a starting URL
 * that is refused fails the task with it); a refused sub-resource simply fails to load.
 */
export function watchBlockedNavigation(ctx: ToolContext, page: Page): { stop(): void; check(): void } {
  const since = Date.now();
  const hosts: { url: string; host: string }[] = [];
  const onRequest = (r: Request) => {
    if (!r.isNavigationRequest() || r.frame() !== page.mainFrame()) return;
    try {
      const u = new URL(r.url());
      if (u.protocol === 'http:' || u.protocol === 'https:') hosts.push({ url: `${u.origin}${u.pathname}`, host: u.hostname });
    } catch {
      /* not a URL the guard sees */
    }
  };
  page.on('request', onRequest);
  return {
    stop: () => page.off('request', onRequest),
    check: () => {
      if (!ctx.egress) return;
      for (const h of hosts) {
        const refusal = ctx.egress.refusalOf(h.host, since);
        if (refusal) throw blockedNavigation(h.url, refusal.host, refusal.reason);
      }
    },
  };
}

export function blockedNavigation(url: string, host: string, reason: string): TaskFailure {
  return new TaskFailure('NAVIGATION_BLOCKED', `blocked by the network guard: ${host} is ${reason}`, { url, reason: `${host} is ${reason}` });
}
