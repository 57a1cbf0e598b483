import net from 'node:net';

/**
 * Ports the service under test may reach on 127.0.0.1. The network guard refuses private
 * addresses unless PRIVATE_NETWORK_ALLOWLIST names them, so every local server a test wants
 * the agent's browser or a delivery to reach (fixture pages, webhook receivers, stand-in chat
 * APIs) listens on one of these. They are chosen once by the global setup, below the kernel's
 * ephemeral range so no outgoing connection takes one meanwhile, and split between the jest
 * worker processes.
 */
const PER_WORKER = 24;
const WORKERS = 4;

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Picks free ports for every jest worker (global setup); returns them comma-separated. */
export async function reserveAllowedPorts(): Promise<string> {
  const ports: number[] = [];
  let port = 20_000 + Math.floor(Math.random() * 10_000);
  while (ports.length < PER_WORKER * WORKERS) {
    if (await canListen(port)) ports.push(port);
    port++;
    if (port >= 32_000) port = 20_000;
  }
  return ports.join(',');
}

let next = 0;

/** A port of this test process's share that the service under test is allowed to reach. */
export function allowedPort(): number {
  const all = (process.env.TEST_ALLOWED_PORTS ?? '').split(',').filter(Boolean).map(Number);
  if (!all.length) throw new Error('TEST_ALLOWED_PORTS is not set (the e2e global setup sets it)');
  const worker = Math.max(0, Number(process.env.JEST_WORKER_ID ?? '1') - 1) % WORKERS;
  const share = all.slice(worker * PER_WORKER, (worker + 1) * PER_WORKER);
  return share[next++ % share.length];
}

/** PRIVATE_NETWORK_ALLOWLIST for a service under test: the fixture site and the reserved ports. */
export function testAllowlist(): string {
  const entries = (process.env.TEST_ALLOWED_PORTS ?? '').split(',').filter(Boolean).map((p) => `127.0.0.1:${p}`);
  if (process.env.TEST_FIXTURES_URL) entries.unshift(`127.0.0.1:${new URL(process.env.TEST_FIXTURES_URL).port}`);
  return entries.join(',');
}
