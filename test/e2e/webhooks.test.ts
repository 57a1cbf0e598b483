/**
 * Task-level webhooks end to end: a task that carries `webhook` (run-task, start-session's
 * task, newTask) is delivered by a Temporal workflow with retries, signed with the
 * user's Standard Webhooks secret.
 */
import { MongoClient, type Db } from 'mongodb';
import { verifiesWith } from '../support/standard-webhooks';
import { api, waitFor } from '../support/http';
import { startReceiver } from '../support/webhook-receiver';
import { registerScript } from '../support/scripted-model';
import { createUser, startService } from '../support/service';
import { allowedPort } from '../support/ports';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let mongo: MongoClient;
let db: Db;

beforeAll(async () => {
  receiver = await startReceiver();
  mongo = await MongoClient.connect(process.env.TEST_MONGODB_URL ?? 'mongodb://127.0.0.1:27019/browser_agent_test');
  db = mongo.db();
});
afterAll(async () => {
  await receiver.close();
  await mongo.close();
});

const runTask = (key: string, task: Record<string, unknown>) => api(base(), 'POST', '/start/run-task', { key, body: { task } });
const deliveriesOf = async (taskId: string) => Object.values(((await db.collection<any>('tasks').findOne({ _id: taskId }))?.deliveries ?? {}) as Record<string, any>);

describe('webhook signing secret', () => {
  it('is created on first use, stays the same, and rotates keeping the previous one for 24 hours', async () => {
    const { apiKey: key } = await createUser();
    expect((await api(base(), 'GET', '/webhooks/secret')).body).toMatchObject({ success: false, message: 'API key required' });
    const first = await api(base(), 'GET', '/webhooks/secret', { key });
    expect(first.body).toEqual({ success: true, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{40,}$/), createdAt: expect.any(String), previousSecretExpiresAt: null });
    expect((await api(base(), 'GET', '/webhooks/secret', { key })).body.secret).toBe(first.body.secret);
    const other = await createUser();
    expect((await api(base(), 'GET', '/webhooks/secret', { key: other.apiKey })).body.secret).not.toBe(first.body.secret);

    const rotated = await api(base(), 'POST', '/webhooks/secret/rotate', { key });
    expect(rotated.body).toMatchObject({ success: true, secret: expect.stringMatching(/^whsec_/), previousSecretExpiresAt: expect.any(String) });
    expect(rotated.body.secret).not.toBe(first.body.secret);
    const expires = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
    expect(expires).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(expires).toBeLessThanOrEqual(24 * 3600_000);
    expect((await api(base(), 'GET', '/webhooks/secret', { key })).body).toMatchObject({ secret: rotated.body.secret, previousSecretExpiresAt: rotated.body.previousSecretExpiresAt });

    // a delivery now carries both signatures: one per secret
    const t = token('rotated');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'signed twice' } }] });
    const res = await runTask(key, { prompt: `${t} go`, webhook: { name: 'r', url: receiver.url('/rotated'), submittedData: 'ai_response' } });
    expect(res.body).toMatchObject({ type: 'task_completed' });
    const [got] = await waitFor(async () => (receiver.at('/rotated').length ? receiver.at('/rotated') : null), 30_000);
    const header = String(got.headers['webhook-signature']);
    expect(header.split(' ')).toHaveLength(2);
    const check = (secret: string) => verifiesWith(secret, got.body, got.headers);
    expect(check(rotated.body.secret)).toBe(true);
    expect(check(first.body.secret)).toBe(true);

    // rotated again within the 24 hours: all three secrets sign, the newest first
    const again = await api(base(), 'POST', '/webhooks/secret/rotate', { key });
    const t2 = token('rotated-2');
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: 'signed three times' } }] });
    expect((await runTask(key, { prompt: `${t2} go`, webhook: { name: 'r2', url: receiver.url('/rotated-2'), submittedData: 'ai_response' } })).body).toMatchObject({ type: 'task_completed' });
    const [got2] = await waitFor(async () => (receiver.at('/rotated-2').length ? receiver.at('/rotated-2') : null), 30_000);
    expect(String(got2.headers['webhook-signature']).split(' ')).toHaveLength(3);
    for (const secret of [again.body.secret, rotated.body.secret, first.body.secret]) expect(verifiesWith(secret, got2.body, got2.headers)).toBe(true);
  });
});

describe('task webhooks', () => {
  it('run-task delivers the full response once the task ends, with Authorization and a valid signature; secrets never in it', async () => {
    const { apiKey: key } = await createUser();
    const secret = (await api(base(), 'GET', '/webhooks/secret', { key })).body.secret;
    const t = token('run-hook');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: '{{find:(The answer is \\d+)}}' } }] });
    const res = await runTask(key, {
      prompt: `${t} read it`,
      startingUrl: `${fixtures()}/about.html`,
      secrets: [{ match: 'all', fields: { password: 'pw-never-sent' } }],
      webhook: { name: 'full', url: receiver.url('/full'), auth: 'Basic dXNlcjpwdw==', submittedData: 'full_response' },
    });
    expect(res.body).toMatchObject({ success: true, type: 'task_completed', data: { message: 'The answer is 42' } });
    const [got] = await waitFor(async () => (receiver.at('/full').length ? receiver.at('/full') : null), 30_000);
    expect(got.json).toMatchObject({
      success: true,
      sessionId: res.body.sessionId,
      taskId: res.body.taskId,
      type: 'task_completed',
      status: 'task_completed',
      data: { message: 'The answer is 42', files: [], network: expect.any(Array) },
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number), cost: expect.any(Number) },
      completedAt: expect.any(String),
    });
    expect(got.body).not.toContain('pw-never-sent');
    expect(got.headers.authorization).toBe('Basic dXNlcjpwdw==');
    expect(got.headers['webhook-id']).toBe(`dlv_${res.body.taskId}`);
    expect(verifiesWith(secret, got.body, got.headers)).toBe(true);
    const [record] = await waitFor(async () => {
      const d = await deliveriesOf(res.body.taskId);
      return d[0]?.status === 'delivered' ? d : null;
    }, 10_000);
    expect(record).toMatchObject({ deliveryId: `dlv_${res.body.taskId}`, status: 'delivered', attempts: 1, lastStatusCode: 200, lastError: null });
  });

  it('retries a receiver that fails twice: three attempts, one delivery id, backing off', async () => {
    const { apiKey: key } = await createUser();
    const t = token('flaky');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'third time lucky' } }] });
    receiver.plan('/flaky', [500, 503, 200]);
    const res = await runTask(key, { prompt: `${t} go`, webhook: { name: 'flaky', url: receiver.url('/flaky'), submittedData: 'ai_response' } });
    expect(res.body).toMatchObject({ type: 'task_completed' });
    const got = await waitFor(async () => (receiver.at('/flaky').length >= 3 ? receiver.at('/flaky') : null), 30_000);
    expect(got).toHaveLength(3);
    expect(new Set(got.map((g) => g.headers['webhook-id']))).toEqual(new Set([`dlv_${res.body.taskId}`]));
    expect(new Set(got.map((g) => g.headers['x-delivery-id']))).toEqual(new Set([`dlv_${res.body.taskId}`]));
    for (const g of got) expect(g.json).toEqual({ sessionId: res.body.sessionId, taskId: res.body.taskId, type: 'task_completed', data: { message: 'third time lucky' } });
    const gaps = [got[1].at - got[0].at, got[2].at - got[1].at];
    // the retry policy: 1 s, then 2 s
    expect(gaps[0]).toBeGreaterThanOrEqual(900);
    expect(gaps[1]).toBeGreaterThanOrEqual(1800);
    expect(gaps[1]).toBeGreaterThan(gaps[0]);
    process.stdout.write(`webhook retry gaps: ${gaps.join(' ms, ')} ms\n`);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.at('/flaky')).toHaveLength(3);
    const [record] = await deliveriesOf(res.body.taskId);
    expect(record).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 200, lastError: null });
  });

  it('stops at a 400: one attempt, recorded as failed with the status and the answer', async () => {
    const { apiKey: key } = await createUser();
    const t = token('refused');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'nobody wants this' } }] });
    receiver.plan('/bad-request', [400]);
    const res = await runTask(key, { prompt: `${t} go`, webhook: { name: 'bad', url: receiver.url('/bad-request'), submittedData: 'just_ping' } });
    expect(res.body).toMatchObject({ type: 'task_completed' });
    await waitFor(async () => receiver.at('/bad-request').length >= 1, 30_000);
    const [record] = await waitFor(async () => {
      const d = await deliveriesOf(res.body.taskId);
      return d[0]?.status === 'failed' ? d : null;
    }, 10_000);
    expect(record).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 400, lastError: 'HTTP 400' });
    await new Promise((r) => setTimeout(r, 3500));
    expect(receiver.at('/bad-request')).toHaveLength(1);
    expect(receiver.at('/bad-request')[0].json).toEqual({ sessionId: res.body.sessionId, taskId: res.body.taskId, type: 'task_completed', status: 'task_completed', timestamp: expect.any(Number) });
  });

  it('delivers to a receiver that was down when the task ended and while the API restarted, once it is back', async () => {
    const { apiKey: key } = await createUser();
    const t = token('down');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'kept for later' } }] });
    const port = allowedPort();
    // an API process of its own, killed while the receiver is down
    const apiA = await startService({ ROLE: 'api' });
    const res = await api(apiA.baseUrl, 'POST', '/start/run-task', { key, body: { task: { prompt: `${t} go`, webhook: { name: 'later', url: `http://127.0.0.1:${port}/later`, submittedData: 'ai_response' } } } });
    expect(res.body).toMatchObject({ type: 'task_completed' });
    const [down] = await waitFor(async () => {
      const d = await deliveriesOf(res.body.taskId);
      return d[0]?.attempts >= 2 ? d : null;
    }, 20_000);
    expect(down).toMatchObject({ status: 'retrying', lastStatusCode: null, lastError: expect.stringContaining('ECONNREFUSED') });
    await apiA.stop('SIGKILL');
    const apiB = await startService({ ROLE: 'api' });
    const late = await startReceiver(port);
    try {
      // the task's record, read through the new API process, is as it was
      expect((await api(apiB.baseUrl, 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`)).body).toMatchObject({ status: 'task_completed', data: { message: 'kept for later' } });
      const [got] = await waitFor(async () => (late.at('/later').length ? late.at('/later') : null), 30_000);
      expect(got.json).toMatchObject({ taskId: res.body.taskId, data: { message: 'kept for later' } });
      const [record] = await waitFor(async () => {
        const d = await deliveriesOf(res.body.taskId);
        return d[0]?.status === 'delivered' ? d : null;
      }, 10_000);
      expect(record.attempts).toBeGreaterThanOrEqual(3);
      expect(late.at('/later')).toHaveLength(1);
    } finally {
      await late.close();
      await apiB.stop();
    }
  });

  it('delivers the webhook of a task started with start-session, and of a newTask', async () => {
    const { apiKey: key } = await createUser();
    const t1 = token('first-hook');
    const t2 = token('second-hook');
    await registerScript(model(), { match: t1, steps: [{ tool: 'done', args: { message: 'first' } }] });
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: 'second' } }] });
    const started = await api(base(), 'POST', '/start/start-session', { key, body: { task: { prompt: `${t1} go`, webhook: { name: 'one', url: receiver.url('/session-1'), submittedData: 'ai_response' } } } });
    expect(started.status).toBe(200);
    const [one] = await waitFor(async () => (receiver.at('/session-1').length ? receiver.at('/session-1') : null), 30_000);
    expect(one.json).toMatchObject({ sessionId: started.body.sessionId, taskId: started.body.taskId, data: { message: 'first' } });
    const next = await api(base(), 'POST', '/start/send-message', {
      key,
      body: { sessionId: started.body.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${t2} go`, webhook: { name: 'two', url: receiver.url('/session-2'), submittedData: 'ai_response' } } },
    });
    expect(next.body).toMatchObject({ type: 'task_completed' });
    const [two] = await waitFor(async () => (receiver.at('/session-2').length ? receiver.at('/session-2') : null), 30_000);
    expect(two.json).toMatchObject({ taskId: next.body.taskId, data: { message: 'second' } });
    await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: started.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
  });
});
