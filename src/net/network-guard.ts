/**
 * The network guard: the one place that decides whether a destination a user asked for
 * may be reached. It resolves the name itself, checks the address, and hands back exactly
 * that address to connect to, so a name that resolves differently a moment later (DNS
 * rebinding) cannot slip past: the address checked is the address used.
 */
import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';
import type { LookupFunction } from 'node:net';
import type { Logger } from '../logger';
import { AddressPolicy, bareHost, ownAddressSet, parseAllowlist } from '../contracts/address-policy';

/**
 * What users (the model, the page, task results, delivery records) are told of any
 * destination that was not reached through the guard, whatever the reason: a private
 * address, an address of the service, a name that does not resolve, a resolver that does not
 * answer (this machine offline). The same words for all, true for each, so the refusals
 * cannot map the deployment's internal names; the reason goes to the operator's log only.
 */
export const REFUSED_ADDRESS = 'the address could not be reached or is not allowed';
export const REFUSAL_MESSAGE = REFUSED_ADDRESS;

/** Special-use and customary internal top-level names (RFC 6761, RFC 6762, RFC 8375 and usual private ones). */
const INTERNAL_TOP_LEVEL = new Set(['localhost', 'local', 'localdomain', 'internal', 'intranet', 'lan', 'home', 'corp', 'private', 'test', 'invalid', 'example', 'onion', 'arpa', 'svc', 'cluster']);

/**
 * Whether a host is a public name: a dotted name whose top-level label looks like a public
 * one (letters, or an IDN's xn--) and is not a special-use or customary internal one. Only
 * for such names may a user be told whether the guard refused them: whether a public name
 * resolves is anyone's to know, an internal name's is the deployment's.
 */
export function isPublicName(host: string): boolean {
  const name = host.replace(/\.$/, '').toLowerCase();
  if (net.isIP(name.replace(/^\[|\]$/g, '')) || !name.includes('.')) return false;
  const top = name.slice(name.lastIndexOf('.') + 1);
  return /^([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(top) && !INTERNAL_TOP_LEVEL.has(top);
}

export class GuardRefusal extends Error {
  readonly guard = true;
  constructor(
    readonly host: string,
    readonly port: number,
    /** Why, for the operator's log only (never shown to users). */
    readonly reason: string,
    /** The name did not resolve here (an upstream proxy may still resolve it). */
    readonly unresolved = false,
  ) {
    super(REFUSAL_MESSAGE);
    this.name = 'GuardRefusal';
  }
}

export const isGuardRefusal = (e: unknown): e is GuardRefusal => e instanceof Error && (e as Partial<GuardRefusal>).guard === true;

export interface Resolved {
  address: string;
  family: 4 | 6;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

export interface NetworkGuardOptions {
  /** PRIVATE_NETWORK_ALLOWLIST. */
  allowlist?: string;
  logger?: Logger;
  resolver?: Resolver;
  /** Refuse this machine's own interface addresses (default true). */
  refuseOwnAddresses?: boolean;
}

/** This machine's interface addresses, normalised as the address policy compares them. */
export function machineAddresses(): Set<string> {
  return ownAddressSet(Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)));
}

export class NetworkGuard {
  readonly policy: AddressPolicy;
  private readonly resolver: Resolver;
  private readonly logger?: Logger;

  constructor(opts: NetworkGuardOptions = {}) {
    this.policy = new AddressPolicy(parseAllowlist(opts.allowlist ?? ''), opts.refuseOwnAddresses === false ? new Set() : machineAddresses());
    this.resolver = opts.resolver ?? systemResolver;
    this.logger = opts.logger;
  }

  /**
   * The address to connect to for `host:port`, or a GuardRefusal. Names are resolved here;
   * an allowlisted name may resolve anywhere, any other name must resolve to an address
   * the policy allows (the first such address is used).
   */
  async resolve(host: string, port: number, context: Record<string, unknown> = {}): Promise<Resolved> {
    const bare = bareHost(host);
    const literal = net.isIP(bare);
    if (literal) {
      const reason = this.policy.check(bare, port);
      if (reason) throw this.refuse(bare, port, reason, context);
      return { address: bare, family: literal as 4 | 6 };
    }
    let addresses: { address: string; family: number }[];
    try {
      addresses = await this.resolver(bare);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A name that does not exist is refused like a private one: which names exist is the deployment's to know.
      if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'EAI_NONAME') throw this.refuse(bare, port, `not resolved (${code})`, context, true);
      // A resolver that failed for now (EAI_AGAIN): the same words, but not a refusal (a delivery is tried again later).
      this.logger?.info({ ...context, host: bare, port, reason: `lookup failed (${code ?? 'unknown'})` }, 'network guard could not resolve a destination');
      throw Object.assign(new Error(REFUSAL_MESSAGE), { code });
    }
    if (!addresses.length) throw this.refuse(bare, port, 'not resolved (no address)', context, true);
    if (this.policy.allowsName(bare, port)) return asResolved(addresses[0]);
    let firstReason: string | null = null;
    for (const a of addresses) {
      const reason = this.policy.check(a.address, port);
      if (!reason) return asResolved(a);
      firstReason ??= reason;
    }
    throw this.refuse(bare, port, firstReason ?? 'not allowed', { ...context, resolvedTo: addresses[0].address });
  }

  /**
   * The check for a destination reached through an upstream proxy, which resolves names
   * itself: an address literal must be allowed, and a name that resolves here to a refused
   * address is refused; a name that does not resolve here is left to the proxy.
   */
  async checkThroughProxy(host: string, port: number, context: Record<string, unknown> = {}): Promise<void> {
    try {
      await this.resolve(host, port, context);
    } catch (err) {
      if (isGuardRefusal(err) && !err.unresolved) throw err;
    }
  }

  private refuse(host: string, port: number, reason: string, context: Record<string, unknown>, unresolved = false): GuardRefusal {
    // Host, port and reason only: never a path or a query string.
    this.logger?.info({ ...context, host, port, reason }, 'network guard refused a destination');
    return new GuardRefusal(host, port, reason, unresolved);
  }
}

const asResolved = (a: { address: string; family: number }): Resolved => ({ address: a.address, family: a.family === 6 ? 6 : 4 });

/** A lookup function that always answers `r` (the address the guard already checked). */
export function fixedLookup(r: Resolved): LookupFunction {
  return ((_h: string, options: dns.LookupOptions, callback: (err: null, address: string | dns.LookupAddress[], family?: number) => void) => {
    if (options.all) callback(null, [{ address: r.address, family: r.family }]);
    else callback(null, r.address, r.family);
  }) as LookupFunction;
}
