/**
 * Triggers end to end: HTTP → Temporal Schedule → run workflow → session on a browser
 * worker (scripted model) → webhook delivery to a receiver in this test.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient, type Db } from 'mongodb';
import { verifiesWith } from '../support/standard-webhooks';
import { TriggerIdKey } from '../../src/contracts/search-attributes';
import { api, waitFor } from '../support/http';
import { startReceiver, type Received } from '../support/webhook-receiver';
import { allowedPort } from '../support/ports';
import { openGate, registerScript } from '../support/scripted-model';
import { admin, createUser, startService, temporalClient } from '../support/service';

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

/** An environment of the user, through the API. */
async function createEnvironment(key: string): Promise<string> {
  const res = await api(base(), 'POST', '/environments', { key, body: { name: `triggers ${Date.now()}` } });
  expect(res.status).toBe(200);
  return res.body.environment._id;
}

const cron = (key: string, method: string, path: string, body?: unknown) => api(base(), method, `/cron-jobs${path}`, { key, body });

async function newOwner(opts: { balance?: number } = {}) {
  const user = await createUser(opts);
  const environmentId = await createEnvironment(user.apiKey);
  return { ...user, key: user.apiKey, environmentId };
}

const hook = (path: string, submittedData = 'ai_response', auth?: string) => ({ name: `hook ${path}`, url: receiver.url(path), submittedData, ...(auth ? { auth } : {}) });

async function runsOf(key: string, id: string): Promise<any[]> {
  const res = await cron(key, 'GET', `/${id}/runs?limit=100`);
  expect(res.status).toBe(200);
  return res.body.runs;
}

/** Polls the run history; every 1.5 s, so a long wait stays within the 60 requests a minute of /cron-jobs. */
const waitForRuns = (key: string, id: string, test: (runs: any[]) => boolean, timeoutMs = 60_000) =>
  waitFor(async () => {
    const runs = await runsOf(key, id);
    return test(runs) ? runs : null;
  }, timeoutMs, 1500);

async function describeSchedule(id: string) {
  const { client, close } = await temporalClient();
  try {
    return await client.schedule.getHandle(`trigger-${id}`).describe();
  } finally {
    await close();
  }
}

/** The activities the run that opened this session scheduled, in order (from its Temporal history). */
async function runActivities(sessionId: string): Promise<string[]> {
  const { client, close } = await temporalClient();
  try {
    const parent = (await client.workflow.getHandle(`session-${sessionId}`).describe()).raw.workflowExecutionInfo?.parentExecution;
    if (!parent?.workflowId) throw new Error(`session ${sessionId} has no parent run`);
    const history = await client.workflow.getHandle(parent.workflowId, parent.runId ?? undefined).fetchHistory();
    return (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n): n is string => !!n);
  } finally {
    await close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const latencies = { scheduleToStart: [] as number[], completionToDelivery: [] as number[] };
/** Schedule (or manual trigger) → run start, and run end → the receiver has the delivery. */
function noteLatency(run: any, delivery: Received): void {
  if (run.scheduledAt && run.startedAt) latencies.scheduleToStart.push(Date.parse(run.startedAt) - Date.parse(run.scheduledAt));
  if (run.finishedAt) latencies.completionToDelivery.push(delivery.at - Date.parse(run.finishedAt));
}

describe('triggers', () => {
  afterAll(() => {
    if (latencies.scheduleToStart.length) {
      process.stdout.write(
        `trigger latencies: schedule→run start p50 ${median(latencies.scheduleToStart)} ms (${latencies.scheduleToStart.join(', ')}); completion→delivery p50 ${median(latencies.completionToDelivery)} ms (${latencies.completionToDelivery.join(', ')})\n`,
      );
    }
  });

  it('validates a create with the contract messages, and keeps other users out', async () => {
    const { key, environmentId } = await newOwner();
    const good = { name: 'n', prompt: 'p', environmentId, scheduleType: 'every', scheduleInterval: '1d', webhook: hook('/unused') };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ name: '' }, 400, 'name is required'],
      [{ prompt: undefined }, 400, 'prompt is required'],
      [{ environmentId: undefined }, 400, 'Valid environmentId is required'],
      [{ environmentId: 'env_000000000000000000000000' }, 404, 'Environment not found'],
      [{ webhook: undefined }, 400, 'webhook config is required when deliveryMode includes webhook'],
      [{ scheduleType: 'cron', scheduleCron: '61 * * * *' }, 400, 'scheduleCron "61 * * * *" is not a valid cron expression: "61" is not a valid minute (0-59)'],
      [{ scheduleType: 'cron', scheduleCron: '0 9 * * *', timezone: 'Mars/Olympus' }, 400, 'timezone "Mars/Olympus" is not a known IANA time zone (e.g. UTC, Europe/Paris, America/New_York)'],
      [{ scheduleInterval: '90s' }, 400, 'scheduleInterval must be a whole number followed by m, h or d (minutes, hours, days), e.g. 15m, 2h, 1d'],
      [{ scheduleType: 'at', scheduleAt: '2020-01-01T00:00:00Z' }, 400, 'scheduleAt must be in the future'],
      [{ webhook: { ...hook('/x'), url: 'file:///etc/passwd' } }, 400, 'webhook.url: must be an http(s) URL'],
      [{ outputType: 'structured', outputSchema: { oneOf: [] } }, 400, 'outputSchema is not a valid JSON Schema: outputSchema.oneOf must NOT have fewer than 1 items'],
    ];
    for (const [over, status, message] of cases) {
      const res = await cron(key, 'POST', '', { ...good, ...over });
      expect({ over, status: res.status, message: res.body.message }).toEqual({ over, status, message: expect.stringContaining(message) });
      expect(res.body.success).toBe(false);
    }
    const past = await cron(key, 'POST', '', { ...good, scheduleType: 'at', scheduleAt: '2020-01-01T00:00:00Z' });
    expect(past.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'scheduleAt', value: '2020-01-01T00:00:00Z' } });

    // another user's environment is not found, and neither is another user's trigger
    const other = await newOwner();
    expect((await cron(other.key, 'POST', '', { ...good })).body).toMatchObject({ success: false, message: 'Environment not found' });
    const created = await cron(key, 'POST', '', good);
    expect(created.status).toBe(201);
    const id = created.body.cronJob._id;
    for (const [method, path] of [['GET', ''], ['PUT', ''], ['DELETE', ''], ['POST', '/pause'], ['POST', '/resume'], ['POST', '/trigger'], ['GET', '/runs']] as const) {
      const res = await cron(other.key, method, `/${id}${path}`, method === 'PUT' ? { name: 'mine now' } : undefined);
      expect({ method, path, status: res.status, message: res.body.message }).toEqual({ method, path, status: 404, message: 'Cron job not found' });
    }
    expect((await cron(other.key, 'GET', '')).body).toEqual({ success: true, cronJobs: [] });
    expect((await api(base(), 'GET', '/cron-jobs')).body).toMatchObject({ success: false, message: 'API key required' });
    expect((await cron(key, 'GET', '/cron_unknown')).body).toMatchObject({ success: false, message: 'Cron job not found' });
    expect((await cron(key, 'DELETE', `/${id}`)).body).toEqual({ success: true, message: 'Cron job deleted' });
  });

  it('creates, lists newest first, updates and deletes, with the schedule kept in step', async () => {
    const { key, userId, environmentId } = await newOwner();
    const first = await cron(key, 'POST', '', { name: 'first', prompt: 'p', environmentId, scheduleType: 'every', scheduleInterval: '3h', webhook: hook('/a') });
    expect(first.status).toBe(201);
    expect(first.body.cronJob).toMatchObject({
      userId,
      name: 'first',
      description: '',
      environmentId,
      policyId: null,
      scheduleType: 'every',
      scheduleInterval: '3h',
      timezone: 'UTC',
      outputType: 'text',
      deliveryMode: 'webhook',
      maxConsecutiveFailures: 5,
      status: 'active',
      consecutiveFailures: 0,
      nextRunAt: expect.any(String),
      createdAt: expect.any(String),
    });
    const second = await cron(key, 'POST', '', { name: 'second', prompt: 'p', environmentId, scheduleType: 'cron', scheduleCron: '*/20 * * * *', deliveryMode: 'bot' });
    expect(second.status).toBe(201);
    const list = await cron(key, 'GET', '');
    expect(list.body.cronJobs.map((j: any) => j.name)).toEqual(['second', 'first']);

    const id = first.body.cronJob._id;
    const desc = await describeSchedule(id);
    expect(desc.memo).toMatchObject({ userId, triggerId: id });
    expect(desc.typedSearchAttributes.get(TriggerIdKey)).toBe(id);
    expect(desc.action).toMatchObject({ workflowType: 'triggerRunWorkflow', workflowId: `trigger-run-${id}` });
    expect(first.body.cronJob.nextRunAt).toBe(desc.info.nextActionTimes[0].toISOString());

    // a prompt change leaves the schedule alone; a retry policy reaches the run's retry policy
    const put = await cron(key, 'PUT', `/${id}`, { prompt: 'new prompt', retryPolicy: { maximumAttempts: 3, initialIntervalMs: 2000 } });
    expect(put.body.cronJob).toMatchObject({ prompt: 'new prompt', nextRunAt: first.body.cronJob.nextRunAt, retryPolicy: { maximumAttempts: 3, initialIntervalMs: 2000, backoffCoefficient: 2, maximumIntervalMs: 600000 } });
    expect((await describeSchedule(id)).action.retry).toMatchObject({ maximumAttempts: 3, initialInterval: 2000, backoffCoefficient: 2 });
    const bad = await cron(key, 'PUT', `/${id}`, { scheduleType: 'cron' });
    expect(bad.body).toMatchObject({ success: false, message: 'scheduleCron is required when scheduleType is cron' });
    expect((await cron(key, 'PUT', `/${id}`, { environmentId: 'env_000000000000000000000000' })).body).toMatchObject({ message: 'Environment not found' });

    const del = await cron(key, 'DELETE', `/${id}`);
    expect(del.body).toEqual({ success: true, message: 'Cron job deleted' });
    await expect(describeSchedule(id)).rejects.toThrow();
    expect((await cron(key, 'GET', `/${id}`)).status).toBe(404);
    expect((await cron(key, 'DELETE', `/${id}`)).status).toBe(404);
    await cron(key, 'DELETE', `/${second.body.cronJob._id}`);
  });

  it('computes nextRunAt of a cron trigger in a non-UTC zone from the schedule, and again on update', async () => {
    const { key, environmentId } = await newOwner();
    const created = await cron(key, 'POST', '', { name: 'nine in New York', prompt: 'p', environmentId, scheduleType: 'cron', scheduleCron: '0 9 * * 1-5', timezone: 'America/New_York', deliveryMode: 'bot' });
    expect(created.status).toBe(201);
    const job = created.body.cronJob;
    const next = new Date(job.nextRunAt);
    const inNewYork = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', weekday: 'short', hour: '2-digit', minute: '2-digit', hour12: false }).format(next);
    expect(inNewYork).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 09:00$/);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect([13, 14]).toContain(next.getUTCHours()); // EDT or EST
    expect(job.nextRunAt).toBe((await describeSchedule(job._id)).info.nextActionTimes[0].toISOString());

    const moved = await cron(key, 'PUT', `/${job._id}`, { timezone: 'Asia/Tokyo' });
    const tokyo = new Date(moved.body.cronJob.nextRunAt);
    expect(tokyo.getUTCHours()).toBe(0); // 09:00 in Tokyo (UTC+9, no DST)
    expect(moved.body.cronJob.nextRunAt).not.toBe(job.nextRunAt);
    const interval = await cron(key, 'PUT', `/${job._id}`, { scheduleType: 'every', scheduleInterval: '45m' });
    expect(interval.body.cronJob).toMatchObject({ scheduleType: 'every', scheduleInterval: '45m', scheduleCron: null });
    const described = await describeSchedule(job._id);
    expect(interval.body.cronJob.nextRunAt).toBe(described.info.nextActionTimes[0].toISOString());
    expect(described.spec.intervals?.[0].every).toBe(45 * 60_000);
    expect((await cron(key, 'GET', `/${job._id}`)).body.cronJob.nextRunAt).toBe(interval.body.cronJob.nextRunAt);
    await cron(key, 'DELETE', `/${job._id}`);
  });

  it('runs an at trigger on time and delivers the signed result to the webhook', async () => {
    const { key, userId, environmentId } = await newOwner();
    const t = token('at-run');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'Invoices: {{find:(The answer is \\d+)}}' }, usage: { prompt_tokens: 1000, completion_tokens: 100 } }] });
    const secret = (await api(base(), 'GET', '/webhooks/secret', { key })).body.secret;
    expect(secret).toMatch(/^whsec_/);
    const scheduleAt = new Date(Date.now() + 7000).toISOString();
    const created = await cron(key, 'POST', '', {
      name: 'once',
      prompt: `${t} read the page`,
      startingUrl: `${fixtures()}/about.html`,
      environmentId,
      scheduleType: 'at',
      scheduleAt,
      webhook: hook('/at', 'ai_response', 'Bearer receiver-token'),
    });
    expect(created.status).toBe(201);
    const job = created.body.cronJob;
    expect(job.nextRunAt).toBe(new Date(Math.ceil(Date.parse(scheduleAt) / 1000) * 1000).toISOString());
    // the webhook's auth value is never shown in clear
    expect(job.webhook.auth).toBe('****oken');
    const shown = [(await cron(key, 'GET', `/${job._id}`)).body, (await cron(key, 'GET', '')).body];
    expect(shown[0].cronJob.webhook).toMatchObject({ auth: '****oken', url: receiver.url('/at') });
    expect(shown[1].cronJobs.find((j: any) => j._id === job._id).webhook.auth).toBe('****oken');
    expect(JSON.stringify(shown)).not.toContain('receiver-token');

    const [delivery] = await waitFor(async () => (receiver.at('/at').length ? receiver.at('/at') : null), 60_000);
    expect(delivery.json).toMatchObject({ type: 'task_completed', data: { message: 'Invoices: The answer is 42' }, cronJobId: job._id, runId: expect.any(String), sessionId: expect.any(String), taskId: expect.any(String) });
    expect(delivery.headers).toMatchObject({ authorization: 'Bearer receiver-token', 'content-type': 'application/json', 'webhook-id': expect.stringMatching(/^dlv_run_/) });
    expect(delivery.headers['x-delivery-id']).toBe(delivery.headers['webhook-id']);
    expect(verifiesWith(secret, delivery.body, delivery.headers)).toBe(true);
    expect(verifiesWith(secret, delivery.body.replace('42', '43'), delivery.headers)).toBe(false);

    const [run] = await waitForRuns(key, job._id, (runs) => runs[0]?.deliveries?.[0]?.status === 'delivered');
    expect(run).toMatchObject({
      cronJobId: job._id,
      status: 'completed',
      result: 'Invoices: The answer is 42',
      usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100, cost: expect.any(Number) },
      attempt: 1,
      sessionId: delivery.json.sessionId,
      taskId: delivery.json.taskId,
      deliveries: [{ deliveryId: delivery.headers['webhook-id'], channel: 'webhook', status: 'delivered', attempts: 1, lastStatusCode: 200, lastError: null }],
    });
    expect(run.usage.cost).toBeCloseTo(0.0012, 6);
    // The run's session id is a 128-bit capability like any other session's, drawn by the
    // service (an activity of the run), not by the workflow's seeded generator.
    expect(run.sessionId).toMatch(/^[0-9a-f]{32}$/);
    expect(run.taskId).toMatch(/^task_[0-9a-f]{24}$/);
    expect(await runActivities(run.sessionId)).toEqual(expect.arrayContaining(['newRunSessionIds', 'openRunSession']));
    expect(run.scheduledAt).toBe(job.nextRunAt);
    const startedLate = Date.parse(run.startedAt) - Date.parse(run.scheduledAt);
    expect(startedLate).toBeGreaterThanOrEqual(0);
    expect(startedLate).toBeLessThan(5000);
    noteLatency(run, delivery);

    const after = await cron(key, 'GET', `/${job._id}`);
    expect(after.body.cronJob).toMatchObject({ nextRunAt: null, consecutiveFailures: 0, lastRunStatus: 'completed' });
    expect(after.body.recentRuns.map((r: any) => r._id)).toEqual([run._id]);
    expect((await cron(key, 'GET', `/${job._id}/runs/${run._id}`)).body).toMatchObject({ success: true, run: { _id: run._id, status: 'completed' } });
    expect((await cron(key, 'GET', `/${job._id}/runs/run_unknown`)).body).toMatchObject({ success: false, message: 'Run not found' });
    // the session the run opened is over and gave its slot back
    const me = await waitFor(async () => {
      const u = (await admin(['users', 'list'])).json.users.find((x: any) => x.userId === userId);
      return u.activeSessions === 0 ? u : null;
    }, 15_000);
    expect(me.balance).toBeCloseTo(10 - 0.0012, 6);
    // the run's session ended because its one task ended
    const ended = await waitFor(async () => {
      const r = await api(base(), 'GET', `/start/sessions/${run.sessionId}/events`, { key });
      return r.body.events?.some((e: any) => e.event === 'end_session') ? r.body : null;
    }, 15_000);
    expect(ended).toMatchObject({ status: 'completed', endReason: 'completed' });
    expect(ended.events.at(-1)).toMatchObject({ event: 'end_session', reason: 'completed' });
    await cron(key, 'DELETE', `/${job._id}`);
  });

  it('pauses, resumes and triggers by hand, with the contract errors', async () => {
    const { key, environmentId } = await newOwner();
    const t = token('manual');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'manual run done' } }] });
    const created = await cron(key, 'POST', '', { name: 'daily', prompt: `${t} go`, environmentId, scheduleType: 'every', scheduleInterval: '1d', webhook: hook('/manual', 'just_ping') });
    const job = created.body.cronJob;

    const paused = await cron(key, 'POST', `/${job._id}/pause`);
    expect(paused.body).toEqual({ success: true, cronJob: { _id: job._id, status: 'paused' } });
    expect((await describeSchedule(job._id)).state.paused).toBe(true);
    const again = await cron(key, 'POST', `/${job._id}/pause`);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ success: false, code: 'INVALID_JOB_STATE', message: 'Cannot pause a job with status "paused"' });
    expect((await cron(key, 'GET', `/${job._id}`)).body.cronJob).toMatchObject({ status: 'paused', nextRunAt: null });

    const resumed = await cron(key, 'POST', `/${job._id}/resume`);
    expect(resumed.body).toEqual({ success: true, cronJob: { _id: job._id, status: 'active', consecutiveFailures: 0, nextRunAt: job.nextRunAt } });
    expect((await describeSchedule(job._id)).state.paused).toBe(false);
    const resumeActive = await cron(key, 'POST', `/${job._id}/resume`);
    expect(resumeActive.status).toBe(400);
    expect(resumeActive.body).toMatchObject({ success: false, code: 'INVALID_JOB_STATE', message: 'Cannot resume a job with status "active"' });

    const triggered = await cron(key, 'POST', `/${job._id}/trigger`);
    expect(triggered.body).toEqual({ success: true, message: expect.any(String) });
    const [ping] = await waitFor(async () => (receiver.at('/manual').length ? receiver.at('/manual') : null), 60_000);
    expect(ping.json).toEqual({ sessionId: expect.any(String), taskId: expect.any(String), type: 'task_completed', status: 'task_completed', timestamp: expect.any(Number), cronJobId: job._id, runId: expect.any(String) });
    const [run] = await waitForRuns(key, job._id, (runs) => runs[0]?.status === 'completed');
    expect(run.result).toBe('manual run done');
    noteLatency(run, ping);
    // a manual run leaves the next scheduled run where it was
    expect((await cron(key, 'GET', `/${job._id}`)).body.cronJob.nextRunAt).toBe(job.nextRunAt);
    // a stored nextRunAt that has passed (a run that could not start) is read again from the schedule
    await db.collection<any>('cronJobs').updateOne({ _id: job._id }, { $set: { nextRunAt: new Date(Date.now() - 60_000) } });
    expect((await cron(key, 'GET', `/${job._id}`)).body.cronJob.nextRunAt).toBe(job.nextRunAt);
    // PUT with a status pauses too
    expect((await cron(key, 'PUT', `/${job._id}`, { status: 'paused' })).body.cronJob).toMatchObject({ status: 'paused', nextRunAt: null });
    await cron(key, 'DELETE', `/${job._id}`);
  });

  it('pauses itself (and its schedule) after maxConsecutiveFailures failed runs: an owner without balance', async () => {
    const { key, environmentId } = await newOwner({ balance: 0 });
    const created = await cron(key, 'POST', '', { name: 'broke', prompt: 'p', environmentId, scheduleType: 'every', scheduleInterval: '1d', maxConsecutiveFailures: 2, webhook: hook('/broke', 'full_response') });
    const job = created.body.cronJob;
    await cron(key, 'POST', `/${job._id}/trigger`);
    await waitForRuns(key, job._id, (runs) => runs.length === 1 && runs[0].status === 'failed');
    expect((await cron(key, 'GET', `/${job._id}`)).body.cronJob).toMatchObject({ status: 'active', consecutiveFailures: 1 });
    await cron(key, 'POST', `/${job._id}/trigger`);
    const runs = await waitForRuns(key, job._id, (rs) => rs.length === 2 && rs.every((r) => r.status === 'failed'));
    for (const r of runs) expect(r).toMatchObject({ status: 'failed', code: 'INSUFFICIENT_BALANCE', sessionId: null, error: expect.stringContaining('Insufficient balance') });
    const after = await waitFor(async () => {
      const j = (await cron(key, 'GET', `/${job._id}`)).body.cronJob;
      return j.status === 'paused' ? j : null;
    }, 10_000, 1000);
    expect(after).toMatchObject({ status: 'paused', pausedBy: 'failures', consecutiveFailures: 2, nextRunAt: null });
    const desc = await describeSchedule(job._id);
    expect(desc.state).toMatchObject({ paused: true, note: 'Paused after 2 consecutive failed runs' });
    // the failure was delivered too, as the failed envelope
    const failures = await waitFor(async () => (receiver.at('/broke').length === 2 ? receiver.at('/broke') : null), 30_000);
    expect(failures[0].json).toMatchObject({ success: false, status: 'failed', code: 'INSUFFICIENT_BALANCE', type: 'task_failed', cronJobId: job._id, usage: { cost: 0 } });
    // resume resets the counter
    const resumed = await cron(key, 'POST', `/${job._id}/resume`);
    expect(resumed.body.cronJob).toMatchObject({ status: 'active', consecutiveFailures: 0, nextRunAt: expect.any(String) });
    await cron(key, 'DELETE', `/${job._id}`);
  });

  it('runs in its environment (its files offered to the agent, its profile archived back) and pauses itself after runs the model refuses', async () => {
    const { key, environmentId } = await newOwner();
    const form = new FormData();
    form.append('files', new Blob(['id,amount\n1,42\n'], { type: 'text/csv' }), 'invoices-to-check.csv');
    const uploaded = await fetch(`${base()}/environments/${environmentId}/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(uploaded.status).toBe(200);
    const t = token('refuse-all');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'I refuse to do this', success: false } }] });
    const created = await cron(key, 'POST', '', { name: 'refused twice', prompt: `${t} check the invoices`, startingUrl: `${fixtures()}/about.html`, environmentId, scheduleType: 'every', scheduleInterval: '1d', maxConsecutiveFailures: 2, webhook: hook('/refuse-all', 'full_response') });
    const job = created.body.cronJob;
    await cron(key, 'POST', `/${job._id}/trigger`);
    await waitForRuns(key, job._id, (runs) => runs.length === 1 && runs[0].status === 'failed', 60_000);
    expect((await cron(key, 'GET', `/${job._id}`)).body.cronJob).toMatchObject({ status: 'active', consecutiveFailures: 1 });
    // the run's session ran on the environment: its file was offered, its profile archived back
    const requests = (await (await fetch(`${model().replace(/\/v1$/, '')}/__requests?match=${encodeURIComponent(t)}`)).json()) as any[];
    expect(JSON.stringify(requests[0].body.messages)).toContain('invoices-to-check.csv');
    const env = await waitFor(async () => {
      const e = (await api(base(), 'GET', `/environments/${environmentId}`, { key })).body.environment;
      return e.status === 'ready' ? e : null;
    }, 20_000, 1000);
    expect(env.blobSize).toBeGreaterThan(0);

    await cron(key, 'POST', `/${job._id}/trigger`);
    const runs = await waitForRuns(key, job._id, (rs) => rs.length === 2 && rs.every((r) => r.status === 'failed'), 60_000);
    for (const r of runs) expect(r).toMatchObject({ status: 'failed', code: 'TASK_FAILED', error: 'I refuse to do this', sessionId: expect.any(String) });
    const after = await waitFor(async () => {
      const j = (await cron(key, 'GET', `/${job._id}`)).body.cronJob;
      return j.status === 'paused' ? j : null;
    }, 10_000, 1000);
    expect(after).toMatchObject({ status: 'paused', pausedBy: 'failures', consecutiveFailures: 2, nextRunAt: null });
    expect((await describeSchedule(job._id)).state).toMatchObject({ paused: true, note: 'Paused after 2 consecutive failed runs' });
    await cron(key, 'DELETE', `/${job._id}`);
  });

  it('attempts a failing run again under its retryPolicy, as one run record', async () => {
    const { key, environmentId } = await newOwner();
    const t = token('refuses');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'I will not do that', success: false } }] });
    const created = await cron(key, 'POST', '', {
      name: 'refused',
      prompt: `${t} do it`,
      environmentId,
      scheduleType: 'every',
      scheduleInterval: '1d',
      retryPolicy: { maximumAttempts: 2, initialIntervalMs: 1000 },
      webhook: hook('/refused'),
    });
    const job = created.body.cronJob;
    await cron(key, 'POST', `/${job._id}/trigger`);
    const [run] = await waitForRuns(key, job._id, (runs) => runs[0]?.status === 'failed', 90_000);
    expect(run).toMatchObject({ status: 'failed', code: 'TASK_FAILED', error: 'I will not do that', attempt: 2 });
    expect((await cron(key, 'GET', `/${job._id}`)).body.cronJob.consecutiveFailures).toBe(1);
    const [delivered] = await waitFor(async () => (receiver.at('/refused').length ? receiver.at('/refused') : null), 30_000);
    expect(delivered.json).toMatchObject({ type: 'task_failed', runId: run._id });
    await cron(key, 'DELETE', `/${job._id}`);
  });

  it('records a run that would overlap a still-running one as skipped; the run history pages', async () => {
    const { key, environmentId } = await newOwner();
    const t = token('overlap');
    // the first run's model answer waits for the test: the second trigger comes while it is surely running
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'slow run done' }, gate: t }] });
    const created = await cron(key, 'POST', '', { name: 'slow', prompt: `${t} slowly`, environmentId, scheduleType: 'every', scheduleInterval: '1d', deliveryMode: 'bot' });
    const job = created.body.cronJob;
    await cron(key, 'POST', `/${job._id}/trigger`);
    await waitForRuns(key, job._id, (runs) => runs[0]?.status === 'running', 30_000);
    await cron(key, 'POST', `/${job._id}/trigger`);
    await waitForRuns(key, job._id, (rs) => rs.length === 2 && rs.some((r) => r.status === 'skipped') && rs.some((r) => r.status === 'running'), 60_000);
    await openGate(model(), t);
    const runs = await waitForRuns(key, job._id, (rs) => rs.length === 2 && rs.some((r) => r.status === 'skipped') && rs.some((r) => r.status === 'completed'), 60_000);
    const skipped = runs.find((r) => r.status === 'skipped');
    const done = runs.find((r) => r.status === 'completed');
    expect(skipped).toMatchObject({ code: 'RUN_OVERLAP', error: expect.stringContaining(done._id), sessionId: null, startedAt: null });
    // bot delivery to an environment without a chat connection: recorded as failed, once
    const withBot = await waitForRuns(key, job._id, (rs) => rs.find((r) => r.status === 'completed')?.deliveries?.[0]?.status === 'failed', 30_000);
    expect(withBot.find((r) => r.status === 'completed').deliveries).toEqual([expect.objectContaining({ channel: 'bot', status: 'failed', attempts: 1, lastError: 'The environment has no chat connection' })]);
    expect((await cron(key, 'GET', `/${job._id}`)).body.cronJob.consecutiveFailures).toBe(0);

    // pages of one, newest first, then the end
    const page1 = await cron(key, 'GET', `/${job._id}/runs?limit=1`);
    expect(page1.body).toMatchObject({ success: true, runs: [{ _id: runs[0]._id }], nextCursor: expect.any(String) });
    const page2 = await cron(key, 'GET', `/${job._id}/runs?limit=1&cursor=${page1.body.nextCursor}`);
    expect(page2.body).toMatchObject({ runs: [{ _id: runs[1]._id }] });
    const page3 = page2.body.nextCursor ? await cron(key, 'GET', `/${job._id}/runs?limit=1&cursor=${page2.body.nextCursor}`) : null;
    expect(page3 ? page3.body.runs : []).toEqual([]);
    expect((await cron(key, 'GET', `/${job._id}/runs?limit=0`)).body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'limit', min: 1, max: 100 } });
    expect((await cron(key, 'GET', `/${job._id}/runs?cursor=garbage!`)).body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'cursor' } });
    // delete takes the run history with it
    await cron(key, 'DELETE', `/${job._id}`);
    expect(await db.collection('triggerRuns').countDocuments({ cronJobId: job._id })).toBe(0);
  });

  it('returns structured results that match the trigger outputSchema, correcting the model once', async () => {
    const { key, environmentId } = await newOwner();
    const t = token('structured');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'done', args: { message: '{"answer": "forty-two"}' } },
        { tool: 'done', args: { message: '{"answer": {{find:The answer is (\\d+)}}, "page": "about"}' } },
      ],
    });
    const outputSchema = { type: 'object', properties: { answer: { type: 'number' }, page: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const created = await cron(key, 'POST', '', { name: 'json', prompt: `${t} answer`, startingUrl: `${fixtures()}/about.html`, environmentId, scheduleType: 'every', scheduleInterval: '1d', outputType: 'structured', outputSchema, webhook: hook('/structured', 'full_response') });
    expect(created.body.cronJob).toMatchObject({ outputType: 'structured', outputSchema });
    await cron(key, 'POST', `/${created.body.cronJob._id}/trigger`);
    const [run] = await waitForRuns(key, created.body.cronJob._id, (runs) => ['completed', 'failed'].includes(runs[0]?.status));
    expect(run).toMatchObject({ status: 'completed', result: '{"answer":42,"page":"about"}' });
    const [full] = await waitFor(async () => (receiver.at('/structured').length ? receiver.at('/structured') : null), 30_000);
    noteLatency(run, full);
    expect(full.json).toMatchObject({ success: true, type: 'task_completed', data: { message: '{"answer":42,"page":"about"}' }, usage: { total_tokens: expect.any(Number) } });
    await cron(key, 'DELETE', `/${created.body.cronJob._id}`);
  });

  it('allows 50 triggers per user', async () => {
    const { key, environmentId } = await newOwner();
    const body = { prompt: 'p', environmentId, scheduleType: 'every', scheduleInterval: '7d', deliveryMode: 'bot', status: 'paused' };
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const r = await cron(key, 'POST', '', { ...body, name: `t${i}` });
      expect(r.status).toBe(201);
      ids.push(r.body.cronJob._id);
    }
    const over = await cron(key, 'POST', '', { ...body, name: 'one too many' });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ success: false, message: 'Maximum of 50 cron jobs per user' });
    // clean up the schedules directly (the API's 60 requests a minute are spent)
    const { client, close } = await temporalClient();
    try {
      for (const id of ids) await client.schedule.getHandle(`trigger-${id}`).delete();
    } finally {
      await close();
    }
  });
});

describe('structured output of tasks', () => {
  const runTask = (key: string, task: Record<string, unknown>) => api(base(), 'POST', '/start/run-task', { key, body: { task } });
  const requestsOf = async (t: string) => (await (await fetch(`${model().replace(/\/v1$/, '')}/__requests?match=${encodeURIComponent(t)}`)).json()) as any[];

  it('writes CSV from the rows the model returns, with the header row and RFC 4180 quoting', async () => {
    const { apiKey: key } = await createUser();
    const t = token('csv');
    const rows = [
      { month: '2026-10', total: 1234.5 },
      { month: 'Nov, "late"', total: 99 },
    ];
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { rows } }] });
    const res = await runTask(key, { prompt: `${t} table`, outputType: 'structured_csv', outputSchema: ['month', 'total'] });
    expect(res.body).toMatchObject({ type: 'task_completed', data: { message: 'month,total\r\n2026-10,1234.5\r\n"Nov, ""late""",99\r\n' } });
    // the columns reached the model as the done tool's parameters
    const [request] = await requestsOf(t);
    const done = request.body.tools.find((tool: any) => tool.function.name === 'done');
    expect(Object.keys(done.function.parameters.properties.rows.items.properties)).toEqual(['month', 'total']);
  });

  it('gives the outputSchema to the model as the done tool parameters and takes the result as a value', async () => {
    const { apiKey: key } = await createUser();
    const t = token('json-value');
    const outputSchema = { type: 'object', properties: { answer: { type: 'number' }, unit: { type: 'string', enum: ['m', 'km'] } }, required: ['answer', 'unit'], additionalProperties: false };
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { result: { answer: 42, unit: 'km' } } }] });
    const res = await runTask(key, { prompt: `${t} how far`, outputType: 'structured_json', outputSchema });
    expect(res.body).toMatchObject({ type: 'task_completed', data: { message: '{"answer":42,"unit":"km"}' } });
    const [request] = await requestsOf(t);
    const done = request.body.tools.find((tool: any) => tool.function.name === 'done');
    expect(done.function.parameters.properties.result).toMatchObject(outputSchema);
  });

  it('fails with INVALID_STRUCTURED_OUTPUT when the result never matches the schema, after telling the model why', async () => {
    const { apiKey: key } = await createUser();
    const t = token('never-json');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'The answer is forty-two' } }] });
    const res = await runTask(key, { prompt: `${t} answer`, outputType: 'structured_json', outputSchema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] } });
    expect(res.body).toMatchObject({ success: false, status: 'failed', code: 'INVALID_STRUCTURED_OUTPUT', error: expect.stringContaining('not valid JSON') });
    const requests = await requestsOf(t);
    expect(requests).toHaveLength(3);
    expect(JSON.stringify(requests[1].body.messages)).toContain('Not accepted: The output is not valid JSON');
  });

  it('refuses an outputSchema the service cannot enforce with a 400', async () => {
    const { apiKey: key } = await createUser();
    const res = await runTask(key, { prompt: 'x', outputType: 'structured_json', outputSchema: { type: 'object', properties: { at: { type: 'date' } } } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.outputSchema' }, message: expect.stringContaining('outputSchema.properties.at.type must be equal to one of the allowed values') });
    const unresolvable = await runTask(key, { prompt: 'x', outputType: 'structured_json', outputSchema: { $ref: 'https://example.com/schema.json' } });
    expect(unresolvable.body).toMatchObject({ code: 'INVALID_PARAMETER', message: expect.stringContaining("can't resolve reference") });
    const csv = await runTask(key, { prompt: 'x', outputType: 'structured_csv', outputSchema: ['a', 'a'] });
    expect(csv.body).toMatchObject({ code: 'INVALID_PARAMETER', message: expect.stringContaining('column names must be unique') });
  });
});

describe('delivery to the environment chat connection (deliveryMode bot)', () => {
  it('sends the run result to the Telegram chat of the environment, retrying a failed attempt, beside the webhook', async () => {
    // a stand-in for the Telegram Bot API: the first call fails, the next succeed
    const calls: { path: string; json: any }[] = [];
    const fake = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        calls.push({ path: req.url ?? '', json: JSON.parse(body) });
        const ok = calls.length > 1;
        res.writeHead(ok ? 200 : 502, { 'content-type': 'application/json' }).end(JSON.stringify(ok ? { ok: true, result: { message_id: 1 } } : { ok: false, description: 'Bad Gateway' }));
      });
    });
    await new Promise<void>((r) => fake.listen(allowedPort(), '127.0.0.1', r));
    const telegram = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    // An API and a workflow worker of their own (their own queue) that reach the stand-in. No
    // browser worker: the run's session uses the suite's, so no other test's session lands on a
    // worker that goes away at the end of this one.
    const own = { TEMPORAL_TASK_QUEUE: `chat-${Date.now()}`, CHAT_API_BASE_URLS: JSON.stringify({ telegram }) };
    const [svc, workflows] = await Promise.all([startService({ ...own, ROLE: 'api' }), startService({ ...own, ROLE: 'workflows' })]);
    try {
      const { apiKey: key } = await createUser();
      const env = (await api(svc.baseUrl, 'POST', '/environments', { key, body: { name: 'with chat' } })).body.environment;
      const botToken = '123456789:AAH-test-token-abcdefghijklmnop';
      expect((await api(svc.baseUrl, 'PUT', `/environments/${env._id}/chat`, { key, body: { provider: 'telegram', botToken, chatId: '-100200300' } })).status).toBe(200);
      const t = token('chat');
      await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'Invoices: 3 new' } }] });
      const created = await api(svc.baseUrl, 'POST', '/cron-jobs', { key, body: { name: 'invoices', prompt: `${t} check`, environmentId: env._id, scheduleType: 'every', scheduleInterval: '1d', deliveryMode: 'both', webhook: hook('/chat-both') } });
      expect(created.status).toBe(201);
      const job = created.body.cronJob;
      await api(svc.baseUrl, 'POST', `/cron-jobs/${job._id}/trigger`, { key });

      await waitFor(async () => (calls.length >= 2 ? calls : null), 60_000);
      expect(calls[1]).toEqual({ path: `/bot${botToken}/sendMessage`, json: { chat_id: '-100200300', text: 'Trigger "invoices" finished:\nInvoices: 3 new', disable_web_page_preview: true } });
      const run = await waitFor(async () => {
        const got = await api(svc.baseUrl, 'GET', `/cron-jobs/${job._id}/runs`, { key });
        if (!got.body.runs) throw new Error(`runs: ${got.status} ${got.text}`);
        const runs = got.body.runs;
        const r = runs[0];
        return r?.deliveries?.length === 2 && r.deliveries.every((d: any) => d.status === 'delivered') ? r : null;
      }, 30_000, 1500);
      const bot = run.deliveries.find((d: any) => d.channel === 'bot');
      expect(bot).toMatchObject({ deliveryId: `bot_${run._id}`, status: 'delivered', attempts: 2, lastStatusCode: 200, lastError: null });
      expect(run.deliveries.find((d: any) => d.channel === 'webhook')).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(JSON.stringify(run)).not.toContain(botToken);
      await api(svc.baseUrl, 'DELETE', `/cron-jobs/${job._id}`, { key });
    } finally {
      await Promise.all([svc.stop(), workflows.stop()]);
      fake.closeAllConnections();
      await new Promise<void>((r) => fake.close(() => r()));
    }
  });
});
