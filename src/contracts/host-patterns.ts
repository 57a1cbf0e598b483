/**
 * Host patterns, shared by secrets (`match`) and policies (`domainRules.domains`):
 * `example.com` is that host, `*.example.com` the domain and all its subdomains, either
 * with an optional `:port`; secrets also take the literal `all`.
 */

export interface HostPattern {
  /** Lower-case host (punycode for international names), without the `*.`. */
  host: string;
  /** `*.host`: the host and any subdomain of it. */
  wildcard: boolean;
  /** Only this port, when given. */
  port?: string;
}

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
export const MAX_HOST_PATTERN = 253;

const PORT = '(6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|\\d{1,4})';
const NAME = '([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/**
 * What parseHostPattern takes, as a JSON Schema pattern for the OpenAPI document: a host name
 * (its last label starting with a letter), optionally `*.` before it and `:port` after it,
 * surrounding spaces allowed. (International names and IPv4 addresses are taken too; the
 * document shows the common form.)
 */
export const HOST_PATTERN_SOURCE = `(\\*\\.)?${NAME}(:${PORT})?`;
/** An http(s) URL with a host name, as the OpenAPI document shows a submitted URL. */
export const HTTP_URL_PATTERN_SOURCE = `^[Hh][Tt][Tt][Pp][Ss]?://${NAME}(:${PORT})?([/?#][^\\s]*)?$`;

/** The pattern, or why it is not one (a message naming what to write instead). */
export function parseHostPattern(raw: string): HostPattern | string {
  const text = raw.trim().toLowerCase();
  if (!text) return 'must not be empty';
  if (text.length > MAX_HOST_PATTERN) return `must be at most ${MAX_HOST_PATTERN} characters`;
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(text) || /[/?#@\s]/.test(text)) return 'must be a host name such as example.com or *.example.com (no scheme, path or spaces)';
  const wildcard = text.startsWith('*.');
  const rest = wildcard ? text.slice(2) : text;
  const [hostPart, port, extra] = rest.split(':');
  if (extra !== undefined || (port !== undefined && !/^\d{1,5}$/.test(port))) return 'has an invalid port';
  if (port !== undefined && Number(port) > 65535) return 'has an invalid port';
  let host: string;
  try {
    // Normalises international names to punycode, as page URLs report them.
    host = new URL(`http://${hostPart}`).hostname;
  } catch {
    return 'must be a host name such as example.com or *.example.com';
  }
  if (host.includes('*')) return 'may use * only as a leading "*." (e.g. *.example.com)';
  if (!IPV4.test(host) && !host.split('.').every((l) => LABEL.test(l))) return 'must be a host name such as example.com or *.example.com';
  return { host, wildcard, ...(port !== undefined ? { port } : {}) };
}

/** Host and port of an http(s) URL (port filled in from the scheme), or null for anything else. */
export function urlHost(url: string | URL): { host: string; port: string } | null {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  return { host: u.hostname.toLowerCase().replace(/\.$/, ''), port: u.port || (u.protocol === 'https:' ? '443' : '80') };
}

export function hostMatches(pattern: HostPattern, target: { host: string; port: string }): boolean {
  if (pattern.port !== undefined && pattern.port !== target.port) return false;
  if (target.host === pattern.host) return true;
  return pattern.wildcard && target.host.endsWith(`.${pattern.host}`);
}

/** How specific a pattern is: an exact host beats a wildcard, a longer domain a shorter one. */
export function specificity(pattern: HostPattern): number {
  return (pattern.wildcard ? 0 : 1000) + pattern.host.length + (pattern.port ? 1 : 0);
}

export function formatHostPattern(p: HostPattern): string {
  return `${p.wildcard ? '*.' : ''}${p.host}${p.port ? `:${p.port}` : ''}`;
}
