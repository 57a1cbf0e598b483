/**
 * URL patterns of policy rules: `*` stands for any characters, matching is case-insensitive
 * and covers the whole URL; a pattern without `*` matches any URL that contains it.
 * No regular expression is built from user text, and a match costs one pass over the URL per
 * part of the pattern: the parts between the stars are found left to right, each at its first
 * place after the one before (the first place is never worse than a later one).
 */
export const MAX_URL_PATTERN = 500;

/**
 * The longest URL a pattern is matched against. A page sets its own address (up to 2 MB in
 * Chromium, with `history.replaceState`), and every pattern of every rule is matched against
 * it before each action: beyond this length the URL is not read, and restrictive rules with
 * URL patterns take it for matching (see CompiledPolicy).
 */
export const MAX_MATCHED_URL = 16_384;

/** A pattern ready for matching: lowercased and cut at its stars. */
export interface UrlPattern {
  source: string;
  /** Without a star: the text the URL must contain. */
  parts: string[];
}

export function compileUrlPattern(pattern: string): UrlPattern {
  return { source: pattern, parts: pattern.toLowerCase().split('*') };
}

/** `url` must already be lowercased (once per action, not once per pattern). */
export function matchesLowercased(pattern: UrlPattern, url: string): boolean {
  const { parts } = pattern;
  if (parts.length === 1) return url.includes(parts[0]);
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!url.startsWith(first)) return false;
  const end = url.length - last.length;
  if (end < first.length || !url.endsWith(last)) return false;
  let at = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i];
    if (!part) continue;
    const found = url.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

export function urlPatternMatches(pattern: string, url: string): boolean {
  return matchesLowercased(compileUrlPattern(pattern), url.toLowerCase());
}
