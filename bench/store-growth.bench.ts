/**
 * The store's cost as data grows, on the bench database (the embedded FerretDB): a task
 * record's find, update and upsert by `_id`, and an ended session's timeline dated and swept,
 * with few and with many documents stored. Writes JSON to BENCH_STORE_OUT (scripts/bench.sh
 * prints it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { EventsRepository } from '../src/store/events.repository';
import { ROOT } from '../test/support/service';

const SIZES = (process.env.BENCH_STORE_SIZES ?? '1000,50000').split(',').map(Number);
const OPS = 30;

const p50 = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] * 10) / 10;
async function timed(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await op(i);
    times.push(performance.now() - t0);
  }
  return p50(times);
}

/** Fills `events` with `count` events of sessions of 50 events each (as ended sessions leave them). */
async function fill(db: Db, count: number): Promise<void> {
  const events = db.collection('events');
  const tasks = db.collection('tasks');
  for (let done = 0; done < count; done += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - done) }, (_, k) => {
      const n = done + k;
      const sessionId = `ses_fill_${Math.floor(n / 50)}`;
      const seq = (n % 50) + 1;
      return { _id: `${sessionId}:${String(seq).padStart(9, '0')}`, sessionId, seq, event: 'message', payload: { type: 'action', data: { name: 'click_element', target: 'Sign in' } }, timestamp: n };
    });
    await events.insertMany(batch as never[]);
    await tasks.insertMany(batch.filter((_, k) => k % 10 === 0).map((b) => ({ _id: `task_fill_${b.timestamp}`, sessionId: b.sessionId, status: 'task_completed', prompt: 'Sign in', steps: 8 })) as never[]);
  }
}

async function measure(db: Db, stored: number) {
  await fill(db, stored);
  const tasks = db.collection<{ _id: string; status?: string; steps?: number }>('tasks');
  const events = new EventsRepository(db);
  const run = `${stored}`;
  // the newest tasks: a scan would meet them last
  const newest = (i: number) => `task_fill_${(stored / 10 - 1 - i) * 10}`;
  const taskFindByIdMs = await timed(OPS, (i) => tasks.findOne({ _id: newest(i) }));
  const taskUpdateByIdMs = await timed(OPS, (i) => tasks.updateOne({ _id: newest(i) }, { $set: { steps: 9 } }));
  const taskUpsertMs = await timed(OPS, (i) => tasks.updateOne({ _id: `task_new_${run}_${i}` }, { $set: { status: 'running', steps: 0 } }, { upsert: true }));
  // one session's life: its events appended, its timeline dated at its end, swept after
  const eventAppendMs = await timed(OPS, (i) => events.appendNext({ sessionId: `ses_probe_${run}`, event: 'message', payload: { type: 'agent', content: `step ${i}` }, timestamp: i } as never));
  // a stream's poll for progress: nothing new, then the 30 events of a task
  const eventsAfterNoneMs = await timed(OPS, () => events.after(`ses_probe_${run}`, OPS));
  const eventsAfter30Ms = await timed(5, () => events.after(`ses_probe_${run}`, 0));
  let t0 = performance.now();
  await events.markExpiry(`ses_probe_${run}`, new Date(Date.now() - 1));
  const markExpiryMs = Math.round((performance.now() - t0) * 10) / 10;
  await events.sweep(new Date()); // the first sweep of a process also clears events dated one by one (older versions)
  for (let i = 0; i < OPS; i++) await events.appendNext({ sessionId: `ses_probe2_${run}`, event: 'message', payload: { type: 'agent', content: `step ${i}` }, timestamp: i } as never);
  await events.markExpiry(`ses_probe2_${run}`, new Date(Date.now() - 1));
  t0 = performance.now();
  const swept = await events.sweep(new Date());
  const sweepMs = Math.round(performance.now() - t0);
  if (swept !== OPS) throw new Error(`swept ${swept} events, expected ${OPS}`);
  return { eventsStored: stored, tasksStored: stored / 10, taskFindByIdMs, taskUpdateByIdMs, taskUpsertMs, eventAppendMs, eventsAfterNoneMs, eventsAfter30Ms, markExpiryMs, sweepOfOneSessionMs: sweepMs, sweptEvents: swept };
}

it('store operations as data grows', async () => {
  const mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27029/browser_agent_bench');
  const results = [];
  try {
    for (const size of SIZES) {
      const db = mongo.db(`store_growth_bench_${size}_${Date.now()}`);
      try {
        results.push(await measure(db, size));
      } finally {
        await db.dropDatabase().catch(() => undefined);
      }
    }
    const out = { benchmark: 'store-growth', opsPerFigure: OPS, figure: 'p50 ms of one operation (markExpiry and sweep: one call)', results };
    fs.writeFileSync(process.env.BENCH_STORE_OUT ?? path.join(ROOT, '.data/bench-store.json'), JSON.stringify(out, null, 2));
  } finally {
    await mongo.close();
  }
}, 1_800_000);
