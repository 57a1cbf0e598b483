import { errors } from 'playwright-core';
import { z } from 'zod';
import { TaskFailure, isServiceError } from '../../contracts/errors';
import { isPageCrash, pageCrashFailure } from '../observe/page-errors';
import { lit } from '../../recording/playwright-code';
import { httpAddress, sentIn } from '../policy/action-facts';
import type { AgentTool } from '../types';
import { abortable } from './abort';
import { watchBlockedNavigation } from './guard-check';

const schema = z.object({ url: z.string().min(1).describe('The address to open, e.g. https://example.com/page') });

/** Network errors that mean the site cannot be reached at all; like a timeout, they end the task. */
const UNREACHABLE = /net::(ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_CONNECTION_CLOSED|ERR_CONNECTION_TIMED_OUT|ERR_TIMED_OUT|ERR_NAME_NOT_RESOLVED|ERR_ADDRESS_UNREACHABLE|ERR_INTERNET_DISCONNECTED|ERR_EMPTY_RESPONSE|ERR_NETWORK_CHANGED)/;

/** Adds the scheme a model often leaves out; other schemes than http(s) (file:, javascript:, chrome:) are refused. */
export function normalizeUrl(raw: string): string {
  const url = raw.trim();
  if (url === 'about:blank') return url;
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(url) && !/^[^:/]+:\d+(\/|$)/.test(url) ? url : `https://${url}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw new Error(`"${raw}" is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`Only http and https addresses can be opened, not ${parsed.protocol}`);
  return withScheme;
}

/** The address a tab was last asked to open while it showed it already: asked again at once, it is reloaded. */
const reloadAsked = new WeakMap<object, string>();
/** An address without its fragment and trailing slash: two addresses of one page compare equal. */
export const withoutHash = (address: string): string => address.replace(/#.*$/, '').replace(/\/$/, '');

/**
 * Another action came after a navigate that was said, not done: asked again later, the page
 * it shows is not reloaded either. The default model typed a phone number, then "opened" the
 * page it was on again, which emptied the field.
 */
export function forgetReloadAsk(page: object): void {
  reloadAsked.delete(page);
}

export const navigateTool: AgentTool<typeof schema, 'navigate'> = {
  name: 'navigate',
  description: 'Open a URL in the active tab.',
  schema,
  async execute(ctx, args) {
    const url = normalizeUrl(args.url);
    // The page it is on, opened again: a small model's way to "look" at it, which loses what
    // a form sent to it. Said, not done, unless asked again at once (a reload).
    const current = ctx.page.url();
    if (withoutHash(current) === withoutHash(url) && reloadAsked.get(ctx.page) !== current) {
      reloadAsked.set(ctx.page, current);
      return { summary: `Not opened: the tab already shows ${current}, and the observation is that page. To load it again, call navigate with it once more.`, target: url, unchanged: true };
    }
    reloadAsked.delete(ctx.page);
    const timeout = ctx.navigationTimeoutMs;
    let status: number | undefined;
    const guard = watchBlockedNavigation(ctx, ctx.page);
    try {
      const response = await abortable(ctx.page.goto(url, { waitUntil: 'domcontentloaded', timeout }), ctx.signal);
      status = response?.status();
      guard.check();
    } catch (err) {
      if (ctx.signal.aborted || isServiceError(err)) throw err;
      guard.check();
      if (isPageCrash(err)) throw pageCrashFailure(err);
      if (err instanceof errors.TimeoutError) throw new TaskFailure('NAVIGATION_TIMEOUT', `Navigation to ${url} timed out after ${timeout} ms`, { url, timeout });
      const message = err instanceof Error ? err.message : String(err);
      const unreachable = UNREACHABLE.exec(message);
      if (unreachable) {
        throw new TaskFailure('NAVIGATION_TIMEOUT', `Navigation to ${url} failed: the site could not be reached (${unreachable[1]})`, { url, timeout, error: unreachable[1] });
      }
      throw new Error(`Navigation to ${url} failed: ${message.split('\n')[0].replace(/^[\w.]+: /, '')}`);
    } finally {
      guard.stop();
    }
    const title = await ctx.page.title().catch(() => '');
    const http = status !== undefined && status >= 400 ? `; the server answered HTTP ${status}` : '';
    return { summary: `Navigated to ${ctx.page.url()}${title ? ` ("${title}")` : ''}${http}`, target: url };
  },
  // Where it leads, and what the address would send (its query, its path), read by the sensitive-data detectors too.
  async policyFacts({ args }) {
    const raw = String(args.url ?? '');
    let url = raw;
    try {
      url = normalizeUrl(raw);
    } catch {
      /* the tool reports the bad address itself */
    }
    return { targetUrl: httpAddress(url), texts: [url], data: sentIn(url) };
  },
  recording: { index: 'none' },
  playwright: (a) => (typeof a.url === 'string' ? [`await page.goto(${lit(/^[a-z][a-z0-9+.-]*:/i.test(a.url) ? a.url : `https://${a.url}`)});`] : []),
};
