/**
 * The way out of one browser context: a forward proxy on the worker's loopback that the
 * context must use (Playwright's context proxy; Playwright also makes Chromium send
 * loopback through it). Every request of the context's pages, workers, WebSockets and
 * downloads arrives here as a CONNECT or an absolute-URL request; the relay asks the
 * network guard for the address, and connects to exactly that address, so Chromium never
 * resolves or connects on its own.
 *
 * One relay per context: it knows whose traffic it carries, records what it refused (the
 * agent is told about refused navigations) and counts the bytes it relays.
 */
import { Server, RequestError } from 'proxy-chain';
import type { Logger } from '../logger';
import { fixedLookup, isGuardRefusal, REFUSAL_MESSAGE, type NetworkGuard } from './network-guard';

export interface Refusal {
  host: string;
  port: number;
  reason: string;
  at: number;
  /** The guard refused the address the name resolved to (false: the name did not resolve or the resolver did not answer). */
  byGuard: boolean;
}

/** Refusals kept for the agent's look-up; the oldest go first. */
const KEEP_REFUSALS = 50;

export class EgressRelay {
  readonly refusals: Refusal[] = [];
  /** Bytes of closed connections, both ways (client side), for metering. */
  private closedBytes = 0;
  private takenBytes = 0;
  /** Why the relay carries nothing now (a spending limit reached within a step), if it does not. */
  private suspended: string | undefined;
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly owner: { sessionId?: string },
  ) {}

  /** The session whose traffic the relay carries (a relay made ahead for a ready context gets it when a session takes the context). */
  get sessionId(): string | undefined {
    return this.owner.sessionId;
  }

  assign(sessionId: string): void {
    this.owner.sessionId = sessionId;
  }

  /**
   * `upstream`: the session's proxy (its host already checked and written as an address),
   * which the relay chains every request to; names then resolve at the proxy.
   */
  static async start(opts: { guard: NetworkGuard; logger: Logger; sessionId?: string; upstream?: string }): Promise<EgressRelay> {
    const owner = { sessionId: opts.sessionId };
    const self: { relay?: EgressRelay } = {};
    const server = new Server({
      port: 0,
      host: '127.0.0.1',
      verbose: false,
      prepareRequestFunction: async ({ hostname, port }) => {
        const stop = self.relay?.suspended;
        if (stop) throw new RequestError(stop, 403, { 'x-spending-limit': 'reached', 'content-type': 'text/plain; charset=utf-8' });
        try {
          if (opts.upstream) {
            await opts.guard.checkThroughProxy(hostname, port, { sessionId: owner.sessionId });
            return { upstreamProxyUrl: opts.upstream };
          }
          const resolved = await opts.guard.resolve(hostname, port, { sessionId: owner.sessionId });
          return { dnsLookup: fixedLookup(resolved) as never };
        } catch (err) {
          if (isGuardRefusal(err)) {
            self.relay?.refused({ host: err.host, port: err.port, reason: err.reason, at: Date.now(), byGuard: !err.unresolved });
            // The page (and so the model) reads the same words for every refusal; the reason is in the operator's log.
            throw new RequestError(err.message, 403, { 'x-network-guard': 'blocked', 'content-type': 'text/plain; charset=utf-8' });
          }
          // Other lookup failures (a resolver that does not answer): said and recorded as a refusal too (the guard logged why).
          self.relay?.refused({ host: hostname.replace(/^\[|\]$/g, '').toLowerCase(), port, reason: 'lookup failed', at: Date.now(), byGuard: false });
          throw new RequestError(REFUSAL_MESSAGE, 403, { 'x-network-guard': 'blocked', 'content-type': 'text/plain; charset=utf-8' });
        }
      },
    });
    server.on('requestFailed', ({ error }: { error: Error }) => opts.logger.debug({ sessionId: owner.sessionId, component: 'egress', err: error.message }, 'relayed request failed'));
    server.on('connectionClosed', ({ stats }: { stats?: { srcTxBytes: number; srcRxBytes: number } }) => {
      if (!self.relay || !stats) return;
      self.relay.closedBytes += stats.srcRxBytes + stats.srcTxBytes;
    });
    await server.listen();
    self.relay = new EgressRelay(server, `http://127.0.0.1:${server.port}`, owner);
    return self.relay;
  }

  private refused(r: Refusal): void {
    this.refusals.push(r);
    if (this.refusals.length > KEEP_REFUSALS) this.refusals.shift();
  }

  /** Bytes relayed both ways so far, open connections included. */
  totalBytes(): number {
    let open = 0;
    for (const id of this.server.getConnectionIds()) {
      const stats = this.server.getConnectionStats(Number(id));
      if (stats) open += stats.srcRxBytes + stats.srcTxBytes;
    }
    return this.closedBytes + open;
  }

  /** Bytes relayed since the previous call (metering takes them once); none while suspended. */
  takeBytes(): number {
    const total = this.totalBytes();
    if (this.suspended) {
      this.takenBytes = total;
      return 0;
    }
    const delta = Math.max(0, total - this.takenBytes);
    this.takenBytes = total;
    return delta;
  }

  /**
   * Carries nothing until `resume`: new requests are refused with `reason` and the open
   * connections closed (their bytes so far stay counted).
   */
  suspend(reason: string): void {
    if (this.suspended) return;
    this.suspended = reason;
    // (a closed connection's bytes are counted as it closes)
    for (const id of this.server.getConnectionIds()) this.server.closeConnection(Number(id));
  }

  resume(): void {
    if (!this.suspended) return;
    // What a page sent to the relay while it refused everything went nowhere: not counted.
    this.takenBytes = this.totalBytes();
    this.suspended = undefined;
  }

  get isSuspended(): boolean {
    return this.suspended !== undefined;
  }

  /** The refusal of `host` (on `port`, when given) recorded at or after `since`, if any. */
  refusalOf(host: string, since: number, port?: number): Refusal | undefined {
    const h = host.replace(/^\[|\]$/g, '').toLowerCase();
    for (let i = this.refusals.length - 1; i >= 0; i--) {
      const r = this.refusals[i];
      if (r.at < since) break;
      if (r.host === h && (port === undefined || r.port === port)) return r;
    }
    return undefined;
  }

  async close(): Promise<void> {
    await this.server.close(true).catch(() => undefined);
  }
}
