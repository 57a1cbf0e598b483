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
import { AddressPolicy, bareHost, ownAddressSet, parseAllowlist } from './address-policy';

export class GuardRefusal extends Error {
  readonly guard = true;
  constructor(
    readonly host: string,
    readonly port: number,
    readonly reason: string,
  ) {
    super(`blocked by the network guard: ${host} is ${reason}`);
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

export class NetworkGuard {
  readonly policy: AddressPolicy;
  private readonly resolver: Resolver;
  private readonly logger?: Logger;

  constructor(opts: NetworkGuardOptions = {}) {
    const own = opts.refuseOwnAddresses === false ? [] : Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
    this.policy = new AddressPolicy(parseAllowlist(opts.allowlist ?? ''), ownAddressSet(own));
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
    const addresses = await this.resolver(bare);
    if (!addresses.length) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${bare}`), { code: 'ENOTFOUND' });
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
      if (isGuardRefusal(err)) throw err;
    }
  }

  private refuse(host: string, port: number, reason: string, context: Record<string, unknown>): GuardRefusal {
    // Host, port and reason only: never a path or a query string.
    this.logger?.info({ ...context, host, port, reason }, 'network guard refused a destination');
    return new GuardRefusal(host, port, reason);
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
