/**
 * The check of URLs a user submits (a task's startingUrl, a webhook's url): one whose host is
 * a literal private address is refused at once, with a 400, instead of failing later. Names
 * are not resolved here (the network guard does that when the address is really used).
 *
 * The API configures the allowlist once at boot (`useSubmissionAllowlist`), so the request
 * schemas stay plain zod schemas.
 */
import net from 'node:net';
import { AddressPolicy, bareHost, parseAllowlist } from './address-policy';

let policy = new AddressPolicy();

export function useSubmissionAllowlist(spec: string): void {
  policy = new AddressPolicy(parseAllowlist(spec));
}

/** Why `url` may not be submitted (its host is a private address literal), or null. */
export function privateAddressProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  // The URL parser has already turned 2130706433, 0x7f.1, 127.1 and the like into 127.0.0.1.
  const host = bareHost(u.hostname);
  if (!net.isIP(host)) return null;
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  const reason = policy.check(host, port);
  return reason ? `${u.hostname} is ${reason}, which the network guard refuses` : null;
}
