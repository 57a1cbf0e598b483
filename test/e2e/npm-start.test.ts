/**
 * `npm start` as a user runs it twice: it stops only what it started itself (by pid), and a
 * start made while the previous run is up or still cleans up waits for that run to end
 * instead of racing it (before, the second adopted the first's Temporal and FerretDB, which
 * the first's clean-up then stopped).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/service';

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

async function freePorts(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let port = 33_000 + Math.floor(Math.random() * 5_000); out.length < n; port++) if (await canListen(port)) out.push(port);
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function healthy(port: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const ok = await fetch(`http://127.0.0.1:${port}/start/health`).then((r) => r.ok, () => false);
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

describe('npm start', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let decoy: ChildProcess | undefined;
  const runs: ChildProcess[] = [];
  let apiPort: number;
  let redisPort: number;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-start-'));
    const [api, temporal, ui, ferret, redis] = await freePorts(5);
    apiPort = api;
    redisPort = redis;
    env = {
      ...(process.env as Record<string, string>),
      DATA_DIR: dataDir,
      PORT: String(api),
      INFRA_TEMPORAL_PORT: String(temporal),
      INFRA_TEMPORAL_UI_PORT: String(ui),
      INFRA_FERRETDB_PORT: String(ferret),
      INFRA_REDIS_PORT: String(redis),
      // A hosted-style model setting, so no local model is fetched or started here.
      LLM_BASE_URL: process.env.TEST_LLM_BASE_URL ?? 'http://127.0.0.1:9',
      LLM_API_KEY: 'test-key',
      LLM_MODEL: 'scripted-model',
      LOG_LEVEL: 'warn',
    };
    for (const k of ['TEMPORAL_ADDRESS', 'MONGODB_URL', 'REDIS_URL', 'METRICS_PORT', 'TEMPORAL_METRICS_PORT', 'STARTED_PIDS_FILE']) delete env[k];
    // A Redis that is not npm start's: it listens on the Redis port before npm start runs.
    decoy = spawn('redis-server', ['--port', String(redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 40 && (await canListen(redis)); i++) await new Promise((r) => setTimeout(r, 100));
  }, 30_000);

  afterAll(async () => {
    // A run still going (the test failed) gets up to 3 s to stop what it started.
    const left = runs.filter((run) => run.exitCode === null && run.signalCode === null);
    for (const run of left) if (run.pid && alive(run.pid)) run.kill('SIGTERM');
    await Promise.all(
      left.map(
        (run) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 3000);
            run.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
    decoy?.kill('SIGKILL');
    spawnSync('bash', [path.join(ROOT, 'scripts/infra.sh'), 'down'], { env, stdio: 'ignore' });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const start = () => {
    const run = spawn('bash', [path.join(ROOT, 'scripts/start.sh')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    run.stdout!.on('data', (d) => (out += d));
    run.stderr!.on('data', (d) => (out += d));
    runs.push(run);
    return { run, output: () => out, exited: new Promise<number | null>((resolve) => run.on('exit', resolve)) };
  };

  it('a second start waits while the first runs and cleans up, then comes up and stays up; each stops only its own processes', async () => {
    const first = start();
    const firstUp = await healthy(apiPort, 120_000);
    if (!firstUp) process.stderr.write(`npm start did not come up in 120 s; its output:\n${first.output().slice(-6000)}\n`);
    expect(firstUp).toBe(true);
    const firstPids = fs.readFileSync(path.join(dataDir, 'run', `started.${first.run.pid}`), 'utf8');
    // It started Temporal and FerretDB, and reused the Redis that was there.
    expect(firstPids).toMatch(/ temporal\n/);
    expect(firstPids).toMatch(/ ferretdb\n/);
    expect(firstPids).not.toMatch(/ redis\n/);

    // A second start while the first is up waits for it (it would otherwise adopt the first's
    // Temporal and FerretDB, which the first's clean-up then stops), then comes up once the
    // first has stopped.
    const second = start();
    for (let i = 0; i < 200 && !/waiting for an earlier npm start/.test(second.output()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(second.output()).toMatch(/waiting for an earlier npm start/);
    await new Promise((r) => setTimeout(r, 2000));
    expect(second.output()).not.toMatch(/ready|starting/);
    first.run.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const up = await healthy(apiPort, 120_000);
    if (!up) process.stderr.write(`second npm start did not come up; its output:\n${second.output()}\nthe first's:\n${first.output().slice(-4000)}\n`);
    expect(up).toBe(true);
    // The first run's clean-up is over: nothing of it stops the second's services now.
    await new Promise((r) => setTimeout(r, 5000));
    expect(await healthy(apiPort, 1000)).toBe(true);
    expect(second.output()).toMatch(/waiting for an earlier npm start/);
    const health = await (await fetch(`http://127.0.0.1:${apiPort}/start/health`)).json();
    expect(health).toMatchObject({ success: true, instancesAvailable: true });

    const secondPids = fs
      .readFileSync(path.join(dataDir, 'run', `started.${second.run.pid}`), 'utf8')
      .trim()
      .split('\n')
      .map((line) => Number(line.split(' ')[0]));
    second.run.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    for (const pid of secondPids) expect([pid, alive(pid)]).toEqual([pid, false]);
    // The Redis that npm start did not start is still there.
    expect(decoy!.pid && alive(decoy!.pid)).toBe(true);
    expect(await canListen(redisPort)).toBe(false);
  }, 360_000);
});
