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
  const socket = net.connect({ host, port });
  socket.setTimeout(timeoutMs);
  let buffered = Buffer.alloc(0);
  const waiting: { need: (b: Buffer) => boolean; resolve: () => void }[] = [];
  const failed = new Promise<never>((_, reject) => {
    socket.on('error', (err: NodeJS.ErrnoException) => reject(new ProxyProbeError(err.code === 'ECONNREFUSED' ? 'connection refused' : `${err.code ?? err.message}`)));
    socket.on('timeout', () => reject(new ProxyProbeError(`no answer within ${timeoutMs} ms`)));
    socket.on('close', () => reject(new ProxyProbeError('the proxy closed the connection')));
  });
  failed.catch(() => undefined);
  socket.on('data', (d: Buffer) => {
    buffered = Buffer.concat([buffered, d]);
    const w = waiting[0];
    if (w && w.need(buffered)) {
      waiting.shift();
      w.resolve();
    }
  });
  const read = async (need: (b: Buffer) => boolean): Promise<Buffer> => {
    if (!need(buffered)) await Promise.race([new Promise<void>((resolve) => waiting.push({ need, resolve })), failed]);
    const out = buffered;
    buffered = Buffer.alloc(0);
    return out;
  };
  try {
    await Promise.race([new Promise<void>((r) => socket.once('connect', () => r())), failed]);
    if (u.protocol === 'http:') {
      const auth = username || password ? `Proxy-Authorization: Basic ${Buffer.from(`${username}:${password}`).toString('base64')}\r\n` : '';
      socket.write(`CONNECT probe.invalid:443 HTTP/1.1\r\nHost: probe.invalid:443\r\n${auth}\r\n`);
      // A proxy that took the credentials tries the (unresolvable) target, and may then just
      // close the connection: only a 407 says the credentials were refused.
      const head = (
        await read((b) => b.includes('\r\n')).catch((err) => {
          if (err instanceof ProxyProbeError && err.reason === 'the proxy closed the connection') return Buffer.from('HTTP/1.1 502 closed\r\n');
          throw err;
        })
      ).toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
      if (!status) throw new ProxyProbeError('the proxy did not answer as an HTTP proxy');
      if (status === 407) throw new ProxyProbeError(username ? 'the proxy refused the credentials (HTTP 407)' : 'the proxy requires credentials (HTTP 407)');
      return;
    }
    const withAuth = Boolean(username || password);
    socket.write(Buffer.from([5, 1, withAuth ? 2 : 0]));
    const choice = await read((b) => b.length >= 2);
    if (choice[0] !== 5) throw new ProxyProbeError('the proxy did not answer as a SOCKS5 proxy');
    if (choice[1] === 0xff) throw new ProxyProbeError(withAuth ? 'the proxy accepts no username/password authentication' : 'the proxy requires credentials');
    if (choice[1] === 2) {
      const user = Buffer.from(username);
      const pass = Buffer.from(password);
      socket.write(Buffer.concat([Buffer.from([1, user.length]), user, Buffer.from([pass.length]), pass]));
      const status = await read((b) => b.length >= 2);
      if (status[1] !== 0) throw new ProxyProbeError('the proxy refused the credentials');
    }
  } finally {
    socket.destroy();
  }
}
