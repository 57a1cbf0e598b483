import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../logger';

/** What an open MCP session holds in the API's memory: its server and its transport. */
export interface McpConnection<T extends Transport = Transport> {
  userId: string;
  server: { close(): Promise<void> };
  transport: T;
}

/** A place among a user's open MCP sessions, taken before the session exists; freed once. */
export interface McpSlot {
  readonly userId: string;
  release(): void;
}

interface Entry {
  id: string;
  conn: McpConnection;
  slot: McpSlot;
  /** JSON-RPC requests of the client not answered yet: the session is busy, not idle. */
  inFlight: Set<RequestId>;
  timer?: NodeJS.Timeout;
  closing: boolean;
}

export interface McpConnectionsOptions {
  /** Open MCP sessions (and ones being initialized) one user may have. */
  maxPerUser: number;
  /** A session with no request and nothing in flight for this long is closed. */
  idleMs: number;
  logger: Logger;
}

/**
 * The MCP sessions of this API process, bounded: at most `maxPerUser` per user (a slot is
 * taken before initialize and freed when the session closes), and a session that has had
 * no request for `idleMs`, with no request of its still running, is closed (transport and
 * server) and its slot freed. Idle timers are unref'd: they never keep the process alive.
 */
export class McpConnections {
  private readonly entries = new Map<string, Entry>();
  private readonly slots = new Map<string, number>();

  constructor(private readonly options: McpConnectionsOptions) {}

  get maxPerUser(): number {
    return this.options.maxPerUser;
  }

  /** The user's slots in use: open sessions plus those being initialized. */
  used(userId: string): number {
    return this.slots.get(userId) ?? 0;
  }

  /** A slot for a new session of the user, or null when the user is at the cap. */
  reserve(userId: string): McpSlot | null {
    const used = this.used(userId);
    if (used >= this.options.maxPerUser) return null;
    this.slots.set(userId, used + 1);
    let released = false;
    return {
      userId,
      release: () => {
        if (released) return;
        released = true;
        const left = this.used(userId) - 1;
        if (left > 0) this.slots.set(userId, left);
        else this.slots.delete(userId);
      },
    };
  }

  /**
   * Registers an initialized session under its id, holding `slot`. Call it once the server
   * is connected to the transport (or from the transport's session-initialized callback):
   * the transport's incoming and outgoing messages are then watched for activity.
   */
  add(id: string, slot: McpSlot, conn: McpConnection): void {
    const entry: Entry = { id, conn, slot, inFlight: new Set(), closing: false };
    this.entries.set(id, entry);
    const { transport } = conn;
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      this.received(entry, message);
      onmessage?.call(transport, message, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      this.sent(entry, message);
      return send(message, options);
    };
    this.arm(entry);
  }

  get(id: string | undefined): McpConnection | undefined {
    return id === undefined ? undefined : this.entries.get(id)?.conn;
  }

  /** An HTTP request reached the session: its idle time starts again. */
  touch(id: string): void {
    const entry = this.entries.get(id);
    if (entry) this.arm(entry);
  }

  /**
   * Forgets the session and frees its slot without closing anything (its transport closed,
   * or is closing). Returns the connection when it was still registered.
   */
  remove(id: string): McpConnection | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.entries.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.slot.release();
    return entry.conn;
  }

  /** Closes the session's server and transport and frees its slot. */
  async close(id: string, reason: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry || entry.closing) return;
    entry.closing = true;
    this.remove(id);
    this.options.logger.debug({ mcpSessionId: id, userId: entry.conn.userId, reason }, 'closing an MCP session');
    try {
      // Closing the server closes its transport (streams end, onclose runs).
      await entry.conn.server.close();
    } catch (err) {
      this.options.logger.debug({ err, mcpSessionId: id }, 'closing an MCP session failed');
    }
  }

  /** Closes every session (API shutdown). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((id) => this.close(id, 'shutdown')));
  }

  get size(): number {
    return this.entries.size;
  }

  private received(entry: Entry, message: JSONRPCMessage): void {
    const m = message as { id?: RequestId; method?: string; params?: { requestId?: RequestId } };
    if (typeof m.method === 'string' && m.id !== undefined) entry.inFlight.add(m.id);
    // A cancelled request is never answered.
    else if (m.method === 'notifications/cancelled' && m.params?.requestId !== undefined) entry.inFlight.delete(m.params.requestId);
    this.arm(entry);
  }

  /** A response (result or error) to one of the client's requests ends that request. */
  private sent(entry: Entry, message: JSONRPCMessage): void {
    const m = message as { id?: RequestId; method?: string };
    if (m.method === undefined && m.id !== undefined && entry.inFlight.delete(m.id)) this.arm(entry);
  }

  /** (Re)starts the idle timer; none while a request of the client is still running. */
  private arm(entry: Entry): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    if (entry.closing || !this.entries.has(entry.id) || entry.inFlight.size > 0) return;
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      this.options.logger.info({ mcpSessionId: entry.id, userId: entry.conn.userId, idleMs: this.options.idleMs }, 'MCP session closed after being idle');
      void this.close(entry.id, 'idle');
    }, this.options.idleMs);
    entry.timer.unref();
  }
}
