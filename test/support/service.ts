import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import net from 'node:net';
import type { Db } from 'mongodb';
import { FileBlobStore } from '../../src/store/file-blobs';
import { testAllowlist } from './ports';

export const ROOT = path.resolve(__dirname, '../..');

/** Ports this process handed out already (a port is given once, even if not yet bound). */
const handedOut = new Set<number>();

/**
 * A free port for a service under test to listen on, below the kernel's ephemeral range
 * (32768 and up) and below the allowed ports (20000-32000; ports.ts): a port from the
 * ephemeral range, freed and listened on a moment later, may be taken meanwhile by an
 * outgoing connection (the global setup failed once with EADDRINUSE on its metrics port).
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 1000; tries++) {
    const port = 10_000 + Math.floor(Math.random() * 10_000);
    // (10080 is one of the ports fetch refuses to reach: "bad port")
    if (handedOut.has(port) || port === 10_080) continue;
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free port in 10000-19999');
}

/** Environment of a service process against the test infrastructure. */
export function serviceEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '127.0.0.1:7244',
    TEMPORAL_NAMESPACE: 'browser-agent',
    MONGODB_URL: process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test',
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391',
    DATA_DIR: process.env.DATA_DIR ?? path.join(ROOT, '.data/test'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    LLM_MODEL: 'scripted-model',
    LLM_API_KEY: 'test-key',
    LLM_MAX_RETRIES: '0',
    LLM_PRICES: JSON.stringify({ 'scripted-model': { input: 1, output: 2 } }),
    WORKER_HEARTBEAT_MS: '1000',
    WORKER_TTL_MS: '4000',
    SHUTDOWN_GRACE_MS: '3000',
    // Idle sessions keep their browsers (tests that discard them set their own delay).
    SESSION_IDLE_DISCARD_MS: '0',
    // The test machine is busy by design: every step gets its picture, so tests see them.
    STEP_PICTURES_LOAD_LIMIT: '1000',
    STEP_PICTURES_BUSY_CPU: '1',
    // Only the test's own local servers are reachable through the network guard.
    PRIVATE_NETWORK_ALLOWLIST: testAllowlist(),
    ...(process.env.TEST_LLM_BASE_URL ? { LLM_BASE_URL: process.env.TEST_LLM_BASE_URL } : {}),
    ...(process.env.TEST_TASK_QUEUE ? { TEMPORAL_TASK_QUEUE: process.env.TEST_TASK_QUEUE } : {}),
    ...extra,
  };
  return env;
}

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `node dist/main.js` and waits for its "ready" line. */
export async function startService(extra: Record<string, string> = {}, timeoutMs = 90_000): Promise<ServiceProcess> {
  const port = extra.PORT ? Number(extra.PORT) : await freePort();
  const env = serviceEnv({ PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...extra });
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not become ready:\n${out.slice(-4000)}`)), timeoutMs);
    const check = () => {
      if (out.includes('"msg":"ready"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before ready:\n${out.slice(-4000)}`));
    });
  });
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => out,
    // A process that does not drain within 20 s is killed: a stuck shutdown must not hold the run.
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', (code) => {
          clearTimeout(kill);
          resolve(code);
        });
        child.kill(signal);
      }),
  };
}

/** Runs the admin CLI and parses its one line of JSON. */
export async function admin(args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; json: any; stderr: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli/admin.js'), ...args], { env: serviceEnv(extra), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  let json: any = null;
  try {
    json = JSON.parse(stdout.trim() || stderr.trim());
  } catch {
    /* left null: the test shows stdout/stderr */
  }
  return { code, json, stderr };
}

export async function createUser(opts: { balance?: number; sessionLimit?: number } = {}): Promise<{ userId: string; apiKey: string }> {
  const email = `u${Date.now()}${Math.floor(Math.random() * 1e6)}@example.test`;
  const res = await admin(['users', 'create', '--email', email, '--balance', String(opts.balance ?? 10), ...(opts.sessionLimit ? ['--session-limit', String(opts.sessionLimit)] : [])]);
  if (res.code !== 0) throw new Error(`admin users create failed: ${res.stderr}`);
  return res.json;
}

/** A Temporal client of the test stack that reads the service's encrypted payloads and failures. */
export async function temporalClient(): Promise<{ client: import('@temporalio/client').Client; close(): Promise<void> }> {
  const { Client, Connection } = await import('@temporalio/client');
  const { EncryptionCodec } = await import('../../src/temporal/codec');
  const { FAILURE_CONVERTER_PATH } = await import('../../src/temporal/connection');
  const fs = await import('node:fs');
  const key = Buffer.from(fs.readFileSync(path.join(serviceEnv().DATA_DIR, 'payload.key'), 'utf8').trim(), 'hex');
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS ?? '127.0.0.1:7244' });
  const client = new Client({ connection, namespace: 'browser-agent', dataConverter: { payloadCodecs: [new EncryptionCodec(key)], failureConverterPath: FAILURE_CONVERTER_PATH } });
  return { client, close: () => connection.close() };
}

/** The blob store as the test service keeps it (BLOB_STORE=files under its DATA_DIR), for tests that look behind the API. */
export function serviceBlobs(db: Db): FileBlobStore {
  return new FileBlobStore(db, path.join(serviceEnv().DATA_DIR, 'blobs'));
}
