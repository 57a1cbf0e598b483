/**
 * Waits that cost nothing: a task waiting for a person longer than HIBERNATE_AFTER_MS lets
 * its browser go (its state sealed in the database, the worker's slot free), survives the
 * restart of the service that ran it, and wakes on any worker when the answer comes: the
 * agent goes on with its conversation on the same page, with the values it had typed.
 */
import { api, waitFor } from '../support/http';
import { recordedRequests, registerScript, requestText } from '../support/scripted-model';
import { createUser, startService, type ServiceProcess } from '../support/service';

const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
/**
 * This file's services share a Redis database and a workflow queue of their own: /start/health
 * counts the sessions of the workers in its registry, and those of other files' services,
 * running at the same time, must not count in it.
 */
const OWN = { REDIS_URL: `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/21`, TEMPORAL_TASK_QUEUE: `hibernation-${Date.now()}` };
/** Long enough to see the held browser counted before it is let go, on a loaded machine too. */
const HIBERNATE = { ...OWN, HIBERNATE_AFTER_MS: '5000' };

const services: ServiceProcess[] = [];
afterAll(async () => {
  for (const svc of services) await svc.stop();
});

async function events(baseUrl: string, key: string, sessionId: string): Promise<any[]> {
  const res = await api(baseUrl, 'GET', `/start/sessions/${sessionId}/events?limit=500`, { key });
  return res.body.events ?? [];
}

/** One service for the tests on short timers: waits for a person, idle sessions (started by the first that needs it). */
let waiting: Promise<ServiceProcess> | undefined;
const waitingService = () =>
  (waiting ??= startService({ ...OWN, HIBERNATE_AFTER_MS: '1000', SESSION_IDLE_DISCARD_MS: '1500', GUARDRAIL_MAX_WAIT_MS: '12000' }).then((svc) => (services.push(svc), svc)));

const sessionsOpen = async (baseUrl: string) => (await api(baseUrl, 'GET', '/start/health')).body.sessionsOpen as number;

describe('hibernation', () => {
  it('frees the browser of a task waiting for a person, survives a service restart, and resumes on the same page with the typed values when answered', async () => {
    const first = await startService(HIBERNATE);
    services.push(first);
    const { apiKey: key } = await createUser({ balance: 10 });
    const t = token('hibernate');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Ada' } },
        { tool: 'request_human_input', args: { type: 'approval_needed', value: 'May I send the form as Ada?' } },
        { tool: 'input_text', args: { index: { ref: 'Email' }, text: 'ada@example.com' } },
        { tool: 'click_element', args: { index: { ref: 'Send' } } },
        { tool: 'done', args: { message: 'The page says: {{find:(Thanks, [A-Za-z]+!)}}' } },
      ],
    });
    const before = await sessionsOpen(first.baseUrl);
    const started = await api(first.baseUrl, 'POST', '/start/start-session', { key, body: { task: { prompt: `${t} send the contact form as Ada`, startingUrl: `${fixtures()}/form.html` } } });
    expect(started.status).toBe(200);
    const { sessionId, taskId } = started.body;
    const asked = await waitFor(async () => {
      const r = await api(first.baseUrl, 'GET', `/task/${sessionId}/${taskId}`, { key });
      return r.body.status === 'guardrail_trigger' ? r.body : null;
    }, 30_000);
    expect(asked.data).toEqual({ type: 'approval_needed', value: 'May I send the form as Ada?' });
    // While it waits, before HIBERNATE_AFTER_MS, its browser is held (the registry hears of it within WORKER_HEARTBEAT_MS).
    await waitFor(async () => ((await sessionsOpen(first.baseUrl)) === before + 1 ? true : null), 10_000);

    // Past HIBERNATE_AFTER_MS: the browser is let go, the slot is free, the watchers are told.
    const slept = await waitFor(async () => (await events(first.baseUrl, key, sessionId)).find((e) => e.type === 'session_hibernated') ?? null, 30_000);
    expect(slept).toMatchObject({ taskId, data: { bytes: expect.any(Number) } });
    await waitFor(async () => ((await sessionsOpen(first.baseUrl)) === before ? true : null), 10_000);
    // The task still waits for its answer (not expired, not timed out).
    expect((await api(first.baseUrl, 'GET', `/task/${sessionId}/${taskId}`, { key })).body.status).toBe('guardrail_trigger');

    // The service that ran it goes away; another one answers.
    expect(await first.stop()).toBe(0);
    const second = await startService(HIBERNATE);
    services.push(second);
    const answeredAt = Date.now();
    const answer = await api(second.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'guardrail', newState: 'resume', prompt: 'Yes, send it' } } });
    expect(answer.status).toBe(200);
    const done = await waitFor(async () => {
      const r = await api(second.baseUrl, 'GET', `/task/${sessionId}/${taskId}`, { key });
      return r.body.status === 'task_completed' ? r.body : null;
    }, 60_000);
    // The Name typed before the hibernation was still in the form it sent.
    expect(done.data.message).toBe('The page says: Thanks, Ada!');
    const woke = (await events(second.baseUrl, key, sessionId)).find((e) => e.type === 'session_resumed');
    expect(woke).toMatchObject({ taskId, data: { sleptMs: expect.any(Number), workerId: expect.any(String) } });

    // The agent went on with its conversation: the next request holds the earlier steps and the answer.
    const requests = await recordedRequests(model(), t);
    expect(requests).toHaveLength(5);
    const resumed = requestText(requests[2]);
    expect(resumed).toContain('send the contact form as Ada');
    expect(resumed).toContain('May I send the form as Ada?');
    expect(resumed).toContain('The human answered your request: Yes, send it');
    process.stdout.write(`hibernation: answer → next model request ${requests[2].at - answeredAt} ms; slept ${woke.data.sleptMs} ms; sealed state ${slept.data.bytes} bytes\n`);
    await api(second.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'state', newState: 'terminate' } } });
    // Its browser worker is let go at once, so it does not load the tests after it.
    await second.stop();
  });
});

describe('hibernation: waking and expiry', () => {
  it('wakes for a takeover (the view page button), keeps waiting for the answer, and expires after GUARDRAIL_MAX_WAIT_MS', async () => {
    const svc = await waitingService();
    const { apiKey: key } = await createUser({ balance: 10 });
    const t = token('hib-wake');
    await registerScript(model(), { match: t, steps: [{ tool: 'request_human_input', args: { type: 'human_input_needed', value: 'Which plan?' } }] });
    const started = await api(svc.baseUrl, 'POST', '/start/start-session', { key, body: { task: { prompt: `${t} pick a plan`, startingUrl: `${fixtures()}/form.html` } } });
    const { sessionId, taskId } = started.body;
    await waitFor(async () => (await events(svc.baseUrl, key, sessionId)).find((e) => e.type === 'session_hibernated') ?? null, 30_000);
    // The view page of a sleeping session says so and offers to wake it.
    const page = await (await fetch(started.body.streaming.webViewURL)).text();
    expect(page).toContain('"asleep":true');
    expect(page).toContain('Wake and take over');
    const takeOver = await api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'interaction', action: { type: 'takeOverControl' } } } });
    expect(takeOver.status).toBe(200);
    const woke = await waitFor(async () => (await events(svc.baseUrl, key, sessionId)).find((e) => e.type === 'session_resumed') ?? null, 30_000);
    expect(woke.data.workerId).toEqual(expect.any(String));
    // A click by hand reaches the woken browser.
    const click = await api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'interaction', action: { type: 'CLICK', x: 100, y: 300 } } } });
    expect(click.status).toBe(200);
    await api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'interaction', action: { type: 'releaseControl' } } } });
    // Nobody answers: within GUARDRAIL_MAX_WAIT_MS of the question the task fails and the session expires.
    const failed = await waitFor(async () => {
      const r = await api(svc.baseUrl, 'GET', `/task/${sessionId}/${taskId}`, { key });
      return r.body.status === 'failed' ? r.body : null;
    }, 40_000);
    expect(failed).toMatchObject({ code: 'HUMAN_WAIT_EXPIRED', details: { maxWaitMs: 12000 } });
    const session = await waitFor(async () => {
      const r = await api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'state', newState: 'pause' } } });
      return r.status === 404 || r.status === 400 || r.status === 409 ? r : null;
    }, 20_000);
    expect(session.status).not.toBe(200);
  });
});

describe('idle sessions without a browser', () => {
  it('lets the browser of an idle session go and brings it back for the next task with its URL, cookies, storage and form values', async () => {
    const svc = await waitingService();
    const { apiKey: key } = await createUser({ balance: 10 });
    const [t1, t2, t3] = [token('idle-one'), token('idle-two'), token('idle-three')];
    await registerScript(model(), {
      match: t1,
      steps: [
        { tool: 'navigate', args: { url: `${fixtures()}/form.html` } },
        { tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Ada' } },
        { tool: 'done', args: { message: 'typed' } },
      ],
    });
    await registerScript(model(), {
      match: t2,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Email' }, text: 'ada@example.com' } },
        { tool: 'click_element', args: { index: { ref: 'Send' } } },
        { tool: 'done', args: { message: 'The page says: {{find:(Thanks, [A-Za-z]+!)}}' } },
      ],
    });
    await registerScript(model(), {
      match: t3,
      steps: [
        { tool: 'navigate', args: { url: `${fixtures()}/state.html` } },
        { tool: 'done', args: { message: '{{find:(visits=\\d+ member=\\w+)}}' } },
      ],
    });
    const send = (message: Record<string, unknown>) => api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message } });
    const started = await api(svc.baseUrl, 'POST', '/start/start-session', { key, body: { task: { prompt: `${t1} type the name`, startingUrl: `${fixtures()}/state.html` } } });
    const sessionId: string = started.body.sessionId;
    await waitFor(async () => ((await api(svc.baseUrl, 'GET', `/task/${sessionId}/${started.body.taskId}`, { key })).body.status === 'task_completed' ? true : null), 30_000);
    const open = await sessionsOpen(svc.baseUrl);
    // Idle past SESSION_IDLE_DISCARD_MS: the browser is let go.
    const slept = await waitFor(async () => (await events(svc.baseUrl, key, sessionId)).find((e) => e.type === 'session_hibernated') ?? null, 30_000);
    expect(slept.data.message).toMatch(/^Idle/);
    await waitFor(async () => ((await sessionsOpen(svc.baseUrl)) === open - 1 ? true : null), 10_000);

    // The next task wakes it: the form still holds the typed name.
    const second = await send({ actionType: 'newTask', newState: 'start', prompt: `${t2} send the form` });
    expect(second.body).toMatchObject({ type: 'task_completed', data: { message: 'The page says: Thanks, Ada!' } });
    expect((await events(svc.baseUrl, key, sessionId)).filter((e) => e.type === 'session_resumed')).toHaveLength(1);
    // Its cookies and local storage came back too (the page counts visits in local storage, sets a cookie once).
    const third = await send({ actionType: 'newTask', newState: 'start', prompt: `${t3} read the state` });
    expect(third.body).toMatchObject({ type: 'task_completed', data: { message: 'visits=2 member=ada' } });
    await send({ actionType: 'state', newState: 'terminate' });
  });
});

describe('hibernation and profiles', () => {
  it('keeps the browser of a session on an environment while it waits (its profile stays locked to it)', async () => {
    const svc = await waitingService();
    const { apiKey: key } = await createUser({ balance: 10 });
    const env = await api(svc.baseUrl, 'POST', '/environments', { key, body: { name: `hibernation ${Date.now()}` } });
    const environmentId = env.body.environment._id;
    const t = token('hib-env');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'request_human_input', args: { type: 'human_input_needed', value: 'Which plan?' } },
        { tool: 'done', args: { message: '{{find:The human answered your request: ([a-z]+)}}' } },
      ],
    });
    const started = await api(svc.baseUrl, 'POST', '/start/start-session', { key, body: { environmentId, task: { prompt: `${t} pick a plan`, startingUrl: `${fixtures()}/form.html` } } });
    expect(started.status).toBe(200);
    const { sessionId, taskId } = started.body;
    await waitFor(async () => ((await api(svc.baseUrl, 'GET', `/task/${sessionId}/${taskId}`, { key })).body.status === 'guardrail_trigger' ? true : null), 30_000);
    // Well past HIBERNATE_AFTER_MS and SESSION_IDLE_DISCARD_MS: still awake.
    await new Promise((r) => setTimeout(r, 3000));
    expect((await events(svc.baseUrl, key, sessionId)).filter((e) => e.type === 'session_hibernated')).toEqual([]);
    await api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'guardrail', newState: 'resume', prompt: 'basic' } } });
    const done = await waitFor(async () => {
      const r = await api(svc.baseUrl, 'GET', `/task/${sessionId}/${taskId}`, { key });
      return r.body.status === 'task_completed' ? r.body : null;
    }, 30_000);
    expect(done.data.message).toBe('basic');
    await new Promise((r) => setTimeout(r, 3000));
    expect((await events(svc.baseUrl, key, sessionId)).filter((e) => e.type === 'session_hibernated')).toEqual([]);
    await api(svc.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'state', newState: 'terminate' } } });
  });
});
