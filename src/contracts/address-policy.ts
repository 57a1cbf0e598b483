/**
 * Which network destinations a user's traffic may reach. Pure logic: the network guard
 * (src/net/network-guard.ts) resolves names and asks this module about the address it is
 * about to connect to.
 *
 * Everything that is not global unicast is refused: loopback, unspecified, RFC 1918, CGNAT,
 * link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 included), IPv6 ULA,
 * multicast, broadcast, reserved and documentation ranges, and IPv6 forms that embed an IPv4
 * address (IPv4-mapped, NAT64, 6to4, Teredo). The operator opens specific internal targets
 * with an allowlist of `host`, `host:port`, `CIDR` or `CIDR:port` entries.
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export interface AllowEntry {
  raw: string;
  /** A host name (lower case) the operator trusts whatever it resolves to. */
  name?: string;
  /** An address range, `[base, prefix]`. */
  range?: [Address, number];
  /** Only this port, when given. */
  port?: number;
}

/** The words said for a refused range (after "<host> is "). */
const REASONS: Record<string, string> = {
  loopback: 'a private address (loopback)',
  unspecified: 'a private address (unspecified)',
  private: 'a private address',
  uniqueLocal: 'a private address (unique local)',
  carrierGradeNat: 'a private address (carrier-grade NAT)',
  linkLocal: 'a private address (link-local)',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
};

/** Why an address is refused, or null for a public (global unicast) address. */
export function refusalReason(ip: string): string | null {
  let addr: Address;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return 'not a valid address';
  }
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  const range = addr.range();
  if (range === 'unicast') return null;
  return REASONS[range] ?? `a reserved address (${range})`;
}

/** Strips the brackets of an IPv6 literal as URLs write it. */
export const bareHost = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase();

/** Parses PRIVATE_NETWORK_ALLOWLIST; throws an Error naming the first bad entry. */
export function parseAllowlist(spec: string): AllowEntry[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseEntry);
}

function parseEntry(raw: string): AllowEntry {
  let hostPart = raw;
  let port: number | undefined;
  // `[v6]:port`, `[v6]`, `v4/cidr:port`, `host:port`; a bare IPv6 (several colons) has no port.
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
  if (bracketed) {
    hostPart = bracketed[1];
    port = bracketed[2] !== undefined ? Number(bracketed[2]) : undefined;
  } else if ((raw.match(/:/g) ?? []).length === 1) {
    const i = raw.lastIndexOf(':');
    hostPart = raw.slice(0, i);
    if (!/^\d+$/.test(raw.slice(i + 1))) throw new Error(`"${raw}": the port must be a number`);
    port = Number(raw.slice(i + 1));
  }
  if (port !== undefined && (port < 1 || port > 65535)) throw new Error(`"${raw}": the port must be 1..65535`);
  if (hostPart.includes('/')) {
    try {
      const [base, prefix] = ipaddr.parseCIDR(hostPart);
      return { raw, range: [base, prefix], port };
    } catch {
      throw new Error(`"${raw}" is not a valid CIDR range`);
    }
  }
  if (ipaddr.isValid(hostPart)) {
    const addr = ipaddr.parse(hostPart);
    return { raw, range: [addr, addr.kind() === 'ipv4' ? 32 : 128], port };
  }
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(hostPart)) throw new Error(`"${raw}" is not a host, host:port, CIDR or CIDR:port`);
  return { raw, name: hostPart.toLowerCase(), port };
}

export class AddressPolicy {
  constructor(
    readonly allowlist: AllowEntry[] = [],
    /** Addresses of this machine's own interfaces: refused even when public. */
    private readonly ownAddresses: ReadonlySet<string> = new Set(),
  ) {}

  /** The operator named this host (before resolution) for this port. */
  allowsName(host: string, port: number): boolean {
    const name = bareHost(host);
    return this.allowlist.some((e) => e.name === name && (e.port === undefined || e.port === port));
  }

  /** The allowlist opens this address and port. */
  allowsAddress(ip: string, port: number): boolean {
    let addr: Address;
    try {
      addr = ipaddr.process(ip);
    } catch {
      return false;
    }
    return this.allowlist.some((e) => {
      if (!e.range || (e.port !== undefined && e.port !== port)) return false;
      const [base, prefix] = e.range;
      return base.kind() === addr.kind() && addr.match(base as never, prefix);
    });
  }

  /** null when `ip:port` may be connected to; else why not. */
  check(ip: string, port: number): string | null {
    if (this.allowsAddress(ip, port)) return null;
    const reason = refusalReason(ip);
    if (reason) return reason;
    if (this.ownAddresses.has(normalize(ip))) return 'an address of the service itself';
    return null;
  }
}

function normalize(ip: string): string {
  try {
    return ipaddr.process(ip).toString();
  } catch {
    return ip;
  }
}

/** This machine's interface addresses in the form `check` compares. */
export function ownAddressSet(addresses: string[]): Set<string> {
  return new Set(addresses.map(normalize));
}
