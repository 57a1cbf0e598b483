import net from 'node:net';
import { Server } from 'proxy-chain';
import { allowedPort } from './ports';

/** What a test proxy saw: each request's target, and whether its credentials were right. */
export interface ProxyLog {
  targets: string[];
  refused: number;
  close(): Promise<void>;
  port: number;
}

/** An HTTP proxy on an allowlisted port that wants `user:pass` and records each target. */
export async function startHttpProxy(user: string, pass: string): Promise<ProxyLog> {
  const log = { targets: [] as string[], refused: 0 };
  const port = allowedPort();
  const server = new Server({
    port,
    host: '127.0.0.1',
    prepareRequestFunction: ({ username, password, hostname, port: p, request }) => {
      if (username !== user || password !== pass) {
        log.refused++;
        return { requestAuthentication: true, failMsg: 'Bad credentials' };
      }
      log.targets.push(request.method === 'CONNECT' ? `${hostname}:${p}` : String(request.url));
      return {};
    },
  });
  await server.listen();
  return {
    get targets() {
      return log.targets;
    },
    get refused() {
      return log.refused;
    },
    port,
    close: () => server.close(true),
  };
}

/** A SOCKS5 proxy (RFC 1928/1929, CONNECT only) on an allowlisted port that wants `user:pass`. */
export async function startSocksProxy(user: string, pass: string): Promise<ProxyLog> {
  const targets: string[] = [];
  let refused = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let buf = Buffer.alloc(0);
    let stage: 'greeting' | 'auth' | 'request' | 'piped' = 'greeting';
    client.on('data', (d: Buffer) => {
      if (stage === 'piped') return;
      buf = Buffer.concat([buf, d]);
      if (stage === 'greeting' && buf.length >= 2 && buf.length >= 2 + buf[1]) {
        const methods = [...buf.subarray(2, 2 + buf[1])];
        buf = buf.subarray(2 + buf[1]);
        if (!methods.includes(2)) return void client.end(Buffer.from([5, 0xff]));
        client.write(Buffer.from([5, 2]));
        stage = 'auth';
      }
      if (stage === 'auth' && buf.length >= 2) {
        const ulen = buf[1];
        if (buf.length < 3 + ulen) return;
        const plen = buf[2 + ulen];
        if (buf.length < 3 + ulen + plen) return;
        const u = buf.subarray(2, 2 + ulen).toString();
        const p = buf.subarray(3 + ulen, 3 + ulen + plen).toString();
        buf = buf.subarray(3 + ulen + plen);
        if (u !== user || p !== pass) {
          refused++;
          return void client.end(Buffer.from([1, 1]));
        }
        client.write(Buffer.from([1, 0]));
        stage = 'request';
      }
      if (stage === 'request' && buf.length >= 5) {
        const atyp = buf[3];
        let host: string;
        let at: number;
        if (atyp === 1) {
          if (buf.length < 10) return;
          host = [...buf.subarray(4, 8)].join('.');
          at = 8;
        } else if (atyp === 3) {
          const len = buf[4];
          if (buf.length < 5 + len + 2) return;
          host = buf.subarray(5, 5 + len).toString();
          at = 5 + len;
        } else {
          return void client.end(Buffer.from([5, 8, 0, 1, 0, 0, 0, 0, 0, 0]));
        }
        const p = buf.readUInt16BE(at);
        const rest = buf.subarray(at + 2);
        targets.push(`${host}:${p}`);
        stage = 'piped';
        const upstream = net.connect({ host, port: p }, () => {
          client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          if (rest.length) upstream.write(rest);
          client.pipe(upstream).pipe(client);
        });
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.on('error', () => client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])));
      }
    });
  });
  const port = allowedPort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    get targets() {
      return targets;
    },
    get refused() {
      return refused;
    },
    port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** The command lines of every process on the machine (to look for leaked credentials). */
export async function allCommandLines(): Promise<string> {
  const fs = await import('node:fs');
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => {
      try {
        return fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        return '';
      }
    })
    .join('\n');
}

