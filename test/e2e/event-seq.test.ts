/**
 * Event seqs when several processes publish for one session (an API instance and a worker
 * do): two real processes against the test FerretDB race on one session's timeline; every
 * event is stored once, in each process's order, and the seqs run 1..n without a gap.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { EventsRepository } from '../../src/store/events.repository';
import { ROOT } from '../support/service';

const PER_PROCESS = 60;

function publisherProcess(sessionId: string, label: string) {
  const child = spawn(process.execPath, [path.join(ROOT, 'test/support/publish-events.mjs'), sessionId, label, String(PER_PROCESS)], {
    env: { ...process.env, TEST_MONGODB_URL: process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test', TEST_REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let markReady: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (d) => {
    out += d;
    if (out.startsWith('ready\n')) markReady();
  });
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; out: string }>((resolve) => child.on('exit', (code) => resolve({ code, out: out.replace(/^ready\n/, '') })));
  void exited.then(() => markReady());
  return { ready, go: () => child.stdin.end('go\n'), exited };
}

it('two processes publishing for one session: no gap, no loss, no duplicate', async () => {
  const sessionId = `ses_seq_${Date.now()}`;
  const a = publisherProcess(sessionId, 'a');
  const b = publisherProcess(sessionId, 'b');
  // Both connect first, then start together.
  await Promise.all([a.ready, b.ready]);
  a.go();
  b.go();
  const results = await Promise.all([a.exited, b.exited]);
  for (const r of results) expect(r).toEqual({ code: 0, out: `done ${PER_PROCESS}\n` });

  const mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test');
  try {
    const stored = await new EventsRepository(mongo.db()).after(sessionId, 0);
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 2 * PER_PROCESS }, (_, i) => i + 1));
    const contents = stored.map((e) => (e.payload as { content: string }).content);
    for (const label of ['a', 'b']) {
      // each process's events all arrived, in the order it published them
      expect(contents.filter((c) => c.startsWith(`${label}-`))).toEqual(Array.from({ length: PER_PROCESS }, (_, i) => `${label}-${i}`));
    }
  } finally {
    await mongo.close();
  }
});
