/**
 * Where a secret may be typed: a secret entry's `match`. A host pattern (see host-patterns.ts),
 * optionally with a scheme before it: `bank.com`, `*.bank.com`, `bank.com:8443`,
 * `http://intranet.example:8080`. What it leaves unsaid is read strictly:
 *   - no scheme: https only (http too on a loopback host: localhost, *.localhost, 127.0.0.0/8,
 *     [::1], where the browser counts plain http as secure as well);
 *   - no port: the scheme's default port only (443 for https, 80 for http).
 * So `bank.com` is https://bank.com and nothing else; `http://bank.com` or `bank.com:8081`
 * must be written to allow those. Frames are told apart by site with the public suffix list
 * (tldts, bundled: no network): attacker.github.io and victim.github.io are two sites.
 */
import { getDomain } from 'tldts';
import { hostMatches, MAX_HOST_PATTERN, parseHostPattern, urlHost, type HostPattern } from './host-patterns';

export type Scheme = 'http' | 'https';

export interface SecretMatch extends HostPattern {
  /** Only this scheme, when given. */
  scheme?: Scheme;
}

/** Scheme, host and port of an http(s) address (the port filled in from the scheme). */
export interface Origin {
  scheme: Scheme;
  host: string;
  port: string;
}

/** The longest match: a scheme, the longest host pattern and a trailing slash. */
export const MAX_SECRET_MATCH = 'https://'.length + MAX_HOST_PATTERN + 1;

const DEFAULT_PORT: Record<Scheme, string> = { http: '80', https: '443' };

/** The match, or why it is not one (a message naming what to write instead). */
export function parseSecretMatch(raw: string): SecretMatch | string {
  const text = raw.trim();
  if (text.length > MAX_SECRET_MATCH) return `must be at most ${MAX_SECRET_MATCH} characters`;
  const named = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(text);
  if (named && !/^https?$/i.test(named[1])) return 'may name only http:// or https:// as its scheme';
  // A trailing slash after the host (as an address is often copied) says nothing more.
  const rest = named ? named[2].replace(/\/$/, '') : text;
  const pattern = parseHostPattern(rest);
  if (typeof pattern === 'string') return pattern.replace('(no scheme, path or spaces)', '(with http:// or https:// if you like, but no path or spaces)');
  return named ? { ...pattern, scheme: named[1].toLowerCase() as Scheme } : pattern;
}

/** Scheme, host and port of an http(s) URL, or null for anything else. */
export function originOf(url: string | URL): Origin | null {
  const at = urlHost(url);
  if (!at) return null;
  const protocol = typeof url === 'string' ? new URL(url).protocol : url.protocol;
  return { scheme: protocol === 'https:' ? 'https' : 'http', ...at };
}

/** Whether a host is this machine's own (where plain http is as safe as https). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]' || host === '::1';
}

/** Whether the match names the origin's host (the scheme and port aside). */
export function hostCovered(match: SecretMatch, origin: Origin): boolean {
  return hostMatches({ host: match.host, wildcard: match.wildcard }, origin);
}

/** Whether the match covers the origin: its host, and its scheme and port as named or by default. */
export function secretMatchCovers(match: SecretMatch, origin: Origin): boolean {
  if (!hostCovered(match, origin)) return false;
  const schemeOk = match.scheme ? match.scheme === origin.scheme : defaultSchemeOk(origin);
  const portOk = match.port !== undefined ? match.port === origin.port : defaultPortOk(origin);
  return schemeOk && portOk;
}

/** Whether the match names the origin's host and refuses it only for what it leaves unsaid (the default scheme or port). */
export function refusedByDefault(match: SecretMatch, origin: Origin): boolean {
  if (!hostCovered(match, origin)) return false;
  const schemeNamedOk = !match.scheme || match.scheme === origin.scheme;
  const portNamedOk = match.port === undefined || match.port === origin.port;
  return schemeNamedOk && portNamedOk && ((!match.scheme && !defaultSchemeOk(origin)) || (match.port === undefined && !defaultPortOk(origin)));
}

const defaultSchemeOk = (origin: Origin): boolean => origin.scheme === 'https' || isLoopbackHost(origin.host);
const defaultPortOk = (origin: Origin): boolean => origin.port === DEFAULT_PORT[origin.scheme];

/**
 * Whether two origins are the same site: the same scheme and the same registrable domain by
 * the public suffix list (its private part too, so github.io's users are sites of their own);
 * an address, or a name with no registrable domain, is a site by itself.
 */
export function sameSite(first: Origin, second: Origin): boolean {
  if (first.scheme !== second.scheme) return false;
  return siteOf(first.host) === siteOf(second.host);
}

function siteOf(host: string): string {
  return getDomain(host, { allowPrivateDomains: true }) ?? host;
}

/** The match as written back: scheme, host pattern, port. */
export function formatSecretMatch(match: SecretMatch): string {
  return `${match.scheme ? `${match.scheme}://` : ''}${match.wildcard ? '*.' : ''}${match.host}${match.port ? `:${match.port}` : ''}`;
}
