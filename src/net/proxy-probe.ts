/**
 * Checks an upstream proxy before a session relies on it: it must accept a connection and
 * the credentials given. An HTTP proxy is asked for a CONNECT (any answer but 407 means the
 * credentials were taken); a SOCKS5 proxy goes through its greeting and username/password
 * authentication (RFC 1928, RFC 1929). Nothing is sent past the proxy.
 */
import net from 'node:net';

export class ProxyProbeError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export async function probeProxy(url: string, timeoutMs = 5000): Promise<void> {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = Number(u.port);
  const username = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  const connection = new ProbeConnection(host, port, timeoutMs);
  try {
    await connection.connected();
    if (u.protocol === 'http:') await probeHttp(connection, username, password);
    else await probeSocks5(connection, username, password);
  } finally {
    connection.close();
  }
}

/** Asks an HTTP proxy for a CONNECT: any answer but 407 means the credentials were taken. */
async function probeHttp(connection: ProbeConnection, username: string, password: string): Promise<void> {
  const auth = username || password ? `Proxy-Authorization: Basic ${Buffer.from(`${username}:${password}`).toString('base64')}\r\n` : '';
  connection.write(`CONNECT probe.invalid:443 HTTP/1.1\r\nHost: probe.invalid:443\r\n${auth}\r\n`);
  // A proxy that took the credentials tries the (unresolvable) target, and may then just
  // close the connection: only a 407 says the credentials were refused.
  const head = (
    await connection
      .read((b) => b.includes('\r\n'))
      .catch((err) => {
        if (err instanceof ProxyProbeError && err.reason === 'the proxy closed the connection') return Buffer.from('HTTP/1.1 502 closed\r\n');
        throw err;
      })
  ).toString('latin1');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
  if (!status) throw new ProxyProbeError('the proxy did not answer as an HTTP proxy');
  if (status === 407) throw new ProxyProbeError(username ? 'the proxy refused the credentials (HTTP 407)' : 'the proxy requires credentials (HTTP 407)');
}

/** Goes through a SOCKS5 proxy's greeting and, when it asks for them, its username/password authentication. */
async function probeSocks5(connection: ProbeConnection, username: string, password: string): Promise<void> {
  const withAuth = Boolean(username || password);
  connection.write(Buffer.from([5, 1, withAuth ? 2 : 0]));
  const choice = await connection.read((b) => b.length >= 2);
  if (choice[0] !== 5) throw new ProxyProbeError('the proxy did not answer as a SOCKS5 proxy');
  if (choice[1] === 0xff) throw new ProxyProbeError(withAuth ? 'the proxy accepts no username/password authentication' : 'the proxy requires credentials');
  if (choice[1] === 2) {
    const user = Buffer.from(username);
    const pass = Buffer.from(password);
    connection.write(Buffer.concat([Buffer.from([1, user.length]), user, Buffer.from([pass.length]), pass]));
    const status = await connection.read((b) => b.length >= 2);
    if (status[1] !== 0) throw new ProxyProbeError('the proxy refused the credentials');
  }
}

/** A connection to the proxy whose answers are read as they come; an error, a timeout or a close fails what waits. */
class ProbeConnection {
  private readonly socket: net.Socket;
  private buffered = Buffer.alloc(0);
  private readonly waiting: { need: (b: Buffer) => boolean; resolve: () => void }[] = [];
  /** Rejects with the connection's first failure. */
  private readonly failed: Promise<never>;

  constructor(host: string, port: number, timeoutMs: number) {
    const socket = net.connect({ host, port });
    this.socket = socket;
    socket.setTimeout(timeoutMs);
    this.failed = new Promise<never>((_, reject) => {
      socket.on('error', (err: NodeJS.ErrnoException) => reject(new ProxyProbeError(err.code === 'ECONNREFUSED' ? 'connection refused' : `${err.code ?? err.message}`)));
      socket.on('timeout', () => reject(new ProxyProbeError(`no answer within ${timeoutMs} ms`)));
      socket.on('close', () => reject(new ProxyProbeError('the proxy closed the connection')));
    });
    this.failed.catch(() => undefined);
    socket.on('data', (d: Buffer) => this.received(d));
  }

  async connected(): Promise<void> {
    await Promise.race([new Promise<void>((r) => this.socket.once('connect', () => r())), this.failed]);
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Everything received so far, once it is what `need` waits for. */
  async read(need: (b: Buffer) => boolean): Promise<Buffer> {
    if (!need(this.buffered)) await Promise.race([new Promise<void>((resolve) => this.waiting.push({ need, resolve })), this.failed]);
    const out = this.buffered;
    this.buffered = Buffer.alloc(0);
    return out;
  }

  close(): void {
    this.socket.destroy();
  }

  private received(d: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, d]);
    const w = this.waiting[0];
    if (w && w.need(this.buffered)) {
      this.waiting.shift();
      w.resolve();
    }
  }
}
