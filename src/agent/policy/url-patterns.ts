/**
 * URL patterns of policy rules: `*` stands for any characters, matching is case-insensitive
 * and covers the whole URL; a pattern without `*` matches any URL that contains it.
 * Matched by a two-pointer scan (no regular expression is built from user text).
 */
export const MAX_URL_PATTERN = 500;

export function urlPatternMatches(pattern: string, url: string): boolean {
  const p = pattern.toLowerCase();
  const u = url.toLowerCase();
  if (!p.includes('*')) return u.includes(p);
  return globMatch(p, u);
}

/** Classic wildcard matching: on a mismatch, the last `*` takes one more character. */
function globMatch(p: string, s: string): boolean {
  let pi = 0;
  let si = 0;
  let star = -1;
  let mark = 0;
  while (si < s.length) {
    if (pi < p.length && p[pi] !== '*' && p[pi] === s[si]) {
      pi++;
      si++;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi++;
      mark = si;
    } else if (star >= 0) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}
