/**
 * The records' retention end to end: a service that keeps an ended session's records a few
 * seconds (RECORDS_RETENTION_DAYS as a fraction of a day) deletes the session, its task, the
 * task's recording and step pictures and its events once that time has passed, so the API
 * answers 404 for them as for any unknown id; a session still active keeps everything.
 * Real API, Temporal, worker and Chromium, on a database of its own (its sweep must not reach
 * what other tests keep).
 */
import { MongoClient, type Db } from 'mongodb';
import { api, waitFor } from '../support/http';
import { registerScript } from '../support/scripted-model';
import { admin, serviceEnv, startService, type ServiceProcess } from '../support/service';

const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
const RETENTION_MS = 4000;

let svc: ServiceProcess;
let mongo: MongoClient;
let db: Db;
let isolated: Record<string, string>;

beforeAll(async () => {
  const url = new URL(serviceEnv().MONGODB_URL);
  url.pathname = `/retention_${Date.now()}`;
  isolated = {
    MONGODB_URL: url.toString(),
    REDIS_URL: `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/17`,
    TEMPORAL_TASK_QUEUE: `retention-${Date.now()}`,
  };
  svc = await startService({ ...isolated, RECORDS_RETENTION_DAYS: String(RETENTION_MS / 86_400_000), RECORDS_SWEEP_INTERVAL_MS: '500', INLINE_WAIT_MS: '25000' });
  mongo = await MongoClient.connect(isolated.MONGODB_URL);
  db = mongo.db();
});
afterAll(async () => {
  await svc?.stop();
  await db?.dropDatabase().catch(() => undefined);
  await mongo?.close();
});

const get = (key: string, path: string) => api(svc.baseUrl, 'GET', path, { key });
const send = (key: string, sessionId: string, message: Record<string, unknown>) => api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message } });

/** A session with one completed task that typed into the form (a recording with a step picture). */
async function sessionWithTask(key: string): Promise<{ sessionId: string; taskId: string; startedAt: number }> {
  const t = token('retention');
  await registerScript(model(), { match: t, steps: [{ tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Ada' } }, { tool: 'done', args: { message: 'typed' } }] });
  const startedAt = Date.now();
  const s = await api(svc.baseUrl, 'POST', '/start/start-session', { key, body: {} });
  expect(s.status).toBe(200);
  const sessionId = s.body.sessionId as string;
  const res = await send(key, sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} Type Ada as the name`, startingUrl: `${fixtures()}/form.html` });
  expect(res.status).toBe(200);
  const taskId = res.body.taskId as string;
  await waitFor(async () => (await get(key, `/task/${sessionId}/${taskId}`)).body.status === 'task_completed', 60_000);
  return { sessionId, taskId, startedAt };
}

/** What the database holds of a session and its task. */
async function countsOf(sessionId: string, taskId: string) {
  return {
    sessions: await db.collection('sessions').countDocuments({ _id: sessionId as never }),
    tasks: await db.collection('tasks').countDocuments({ _id: taskId as never }),
    recordings: await db.collection('recordings').countDocuments({ _id: taskId as never }),
    steps: await db.collection('recording_steps').countDocuments({ taskId }),
    pictures: await db.collection('files').countDocuments({ taskId, kind: 'picture' }),
    events: await db.collection('events').countDocuments({ sessionId }),
  };
}

describe("the records' retention", () => {
  it('deletes an ended session with its task, recording, pictures and events once its retention has passed, and keeps an active one', async () => {
    const created = await admin(['users', 'create', '--email', `ret${Date.now()}@example.test`, '--balance', '10'], isolated);
    expect(created.code).toBe(0);
    const key = created.json.apiKey as string;

    const ended = await sessionWithTask(key);
    const before = await countsOf(ended.sessionId, ended.taskId);
    expect(before).toMatchObject({ sessions: 1, tasks: 1, recordings: 1 });
    expect(before.steps).toBeGreaterThanOrEqual(2);
    expect(before.pictures).toBeGreaterThanOrEqual(1);
    expect(before.events).toBeGreaterThan(0);
    const recorded = await get(key, `/task/${ended.sessionId}/${ended.taskId}/recording`);
    expect(recorded.status).toBe(200);
    const pageUrl = recorded.body.pageUrl as string;
    expect((await fetch(pageUrl)).status).toBe(200);
    const live = await sessionWithTask(key);
    const term = await send(key, ended.sessionId, { actionType: 'state', newState: 'terminate' });
    expect(term.body).toEqual({ success: true, message: 'Session terminated' });
    const endedAt = Date.now();

    // Gone once the retention has passed: the API answers as for any unknown id.
    await waitFor(async () => (await get(key, `/task/${ended.sessionId}/${ended.taskId}`)).status === 404, 30_000).catch(async (err) => {
      console.log(svc.output().slice(-3000));
      throw err;
    });
    expect(Date.now() - endedAt).toBeGreaterThanOrEqual(RETENTION_MS - 500);
    expect((await get(key, `/task/${ended.sessionId}/${ended.taskId}/recording`)).status).toBe(404);
    expect((await get(key, `/start/sessions/${ended.sessionId}/events`)).status).toBe(404);
    expect((await fetch(pageUrl)).status).toBe(404);
    expect(await countsOf(ended.sessionId, ended.taskId)).toEqual({ sessions: 0, tasks: 0, recordings: 0, steps: 0, pictures: 0, events: 0 });

    // The active session, older than the retention by now and swept over several times, keeps everything.
    await new Promise((r) => setTimeout(r, Math.max(0, live.startedAt + RETENTION_MS + 2000 - Date.now())));
    const task = await get(key, `/task/${live.sessionId}/${live.taskId}`);
    expect(task.status).toBe(200);
    expect(task.body.status).toBe('task_completed');
    const recording = await get(key, `/task/${live.sessionId}/${live.taskId}/recording`);
    expect(recording.status).toBe(200);
    expect(recording.body.steps.length).toBeGreaterThanOrEqual(2);
    expect((await get(key, `/start/sessions/${live.sessionId}/events`)).status).toBe(200);
    const kept = await countsOf(live.sessionId, live.taskId);
    expect(kept).toMatchObject({ sessions: 1, tasks: 1, recordings: 1 });
    expect(kept.pictures).toBeGreaterThanOrEqual(1);
    expect(kept.events).toBeGreaterThan(0);
    await send(key, live.sessionId, { actionType: 'state', newState: 'terminate' });
  });
});
