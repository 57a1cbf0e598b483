import type { Config } from '../config';
import { InvalidParameterError } from '../contracts/errors';
import type { SessionProxy } from '../contracts/session-types';
import type { ProxyInput } from '../contracts/schemas/session.schema';

/** The session's upstream proxy: the user's own, or one of the operator's pool by country. */
export function sessionProxy(p: ProxyInput, config: Pick<Config, 'MANAGED_PROXIES' | 'PROXY_PRICE_PER_GB'>, random = Math.random): SessionProxy {
  if (p.source === 'custom') {
    const auth = p.username || p.password ? `${encodeURIComponent(p.username ?? '')}:${encodeURIComponent(p.password ?? '')}@` : '';
    const host = p.host.includes(':') && !p.host.startsWith('[') ? `[${p.host}]` : p.host;
    return { url: `${p.type === 'socks' ? 'socks5' : 'http'}://${auth}${host}:${p.port}`, source: 'custom', level: p.level ?? 'system' };
  }
  const pool = config.MANAGED_PROXIES;
  if (!pool.length) throw new InvalidParameterError('proxy.source', p.source, 'No managed proxies are configured on this service; use a proxy with source "custom"');
  const wanted = p.country.toUpperCase();
  const candidates = wanted === 'RANDOM' ? pool : pool.filter((m) => m.country.toUpperCase() === wanted);
  if (!candidates.length) {
    const available = [...new Set(pool.map((m) => m.country.toUpperCase()))].sort().join(', ');
    throw new InvalidParameterError('proxy.country', p.country, `No managed proxy in ${wanted}; available countries: ${available} (or "random")`);
  }
  const chosen = candidates[Math.floor(random() * candidates.length)];
  return { url: chosen.url, source: 'Service', level: p.level ?? 'system', country: chosen.country.toUpperCase(), pricePerByte: config.PROXY_PRICE_PER_GB / 1e9 };
}
