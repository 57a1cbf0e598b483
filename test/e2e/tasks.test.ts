import { api, waitFor } from '../support/http';
import { admin, createUser, startService, temporalClient, type ServiceProcess } from '../support/service';
import { registerScript } from '../support/scripted-model';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
// Fixed-length tokens: the scripted model prefers the longest token in a message, and a
// follow-up task's prompt also quotes the earlier tasks' prompts.
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

const sendMessage = (key: string, sessionId: string, message: Record<string, unknown>) => api(base(), 'POST', '/start/send-message', { key, body: { sessionId, message } });
const poll = (sessionId: string, taskId: string) => api(base(), 'GET', `/task/${sessionId}/${taskId}`);
const pollUntil = (sessionId: string, taskId: string, status: string, timeoutMs = 30_000) =>
  waitFor(async () => {
    const r = await poll(sessionId, taskId);
    return r.body.status === status ? r.body : null;
  }, timeoutMs);

async function modelRequests(match: string): Promise<any[]> {
  const res = await fetch(`${model().replace(/\/v1$/, '')}/__requests?match=${encodeURIComponent(match)}`);
  return (await res.json()) as any[];
}

async function bigTitle(): Promise<string> {
  const html = await (await fetch(`${fixtures()}/big.html`)).text();
  return html.match(/<title>([^<]+)<\/title>/)![1];
}

/**
 * An API process of its own whose inline wait (1 s) ends well before the scripted model's slow
 * answers: started by the first test that needs it, killed by the restart test.
 */
let shortWait: Promise<ServiceProcess> | undefined;
const shortWaitApi = () => (shortWait ??= startService({ ROLE: 'api', INLINE_WAIT_MS: '1000' }));
afterAll(async () => {
  await shortWait?.then(
    (own) => own.stop(),
    () => undefined,
  );
});

async function startSession(key: string, task?: Record<string, unknown>) {
  const res = await api(base(), 'POST', '/start/start-session', { key, body: task ? { task } : {} });
  expect(res.status).toBe(200);
  return res.body as { sessionId: string; taskId?: string; balance: number };
}

describe('tasks', () => {
  it('fills and submits a form, answered inline with the message, usage and the charge', async () => {
    const { userId, apiKey: key } = await createUser({ balance: 10 });
    const t = token('form');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Name' }, text: 'Ada' }, usage: { prompt_tokens: 1000, completion_tokens: 50 } },
        { tool: 'input_text', args: { index: { ref: 'Email' }, text: 'ada@example.com' }, usage: { prompt_tokens: 1000, completion_tokens: 50 } },
        { tool: 'select_option', args: { index: { ref: 'Topic' }, value: 'Support' }, usage: { prompt_tokens: 1000, completion_tokens: 50 } },
        { tool: 'click_element', args: { index: { ref: 'Send' } }, usage: { prompt_tokens: 1000, completion_tokens: 50 } },
        { tool: 'done', args: { message: 'The page says: {{find:(Thanks, [A-Za-z]+!)}}' }, usage: { prompt_tokens: 1000, completion_tokens: 50 } },
      ],
    });
    const s = await startSession(key);
    const res = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} Send the contact form as Ada`, startingUrl: `${fixtures()}/form.html` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      sessionId: s.sessionId,
      taskId: expect.any(String),
      type: 'task_completed',
      data: { message: 'The page says: Thanks, Ada!' },
      usage: { prompt_tokens: 5000, completion_tokens: 250, total_tokens: 5250, cost: expect.any(Number), completion_time: expect.any(Number) },
    });
    // prices in the test config: 1 USD per million input tokens, 2 per million output tokens
    expect(res.body.usage.cost).toBeCloseTo(0.0055, 6);
    // charged once, right after the answer
    const charged = await waitFor(async () => {
      const u = (await admin(['users', 'list'])).json.users.find((x: any) => x.userId === userId);
      return u.balance < 10 ? u : null;
    }, 10_000);
    expect(charged.balance).toBeCloseTo(10 - 0.0055, 6);

    const polled = await poll(s.sessionId, res.body.taskId);
    expect(polled.body).toMatchObject({ type: 'task_completed', data: { message: 'The page says: Thanks, Ada!' }, completedAt: expect.any(String) });
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('ends a task that repeats one action on an unchanged page: told at the 3rd, TASK_LOOP_DETECTED at the 5th; the next task of the session runs', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const t = token('loop');
    const t2 = token('after');
    await registerScript(model(), { match: t, steps: [{ tool: 'click_element', args: { index: { ref: 'Continue' } } }] });
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: 'Still here: {{find:Title: ([^\\n]+)}}' } }] });
    const s = await startSession(key);
    const res = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} go on`, startingUrl: `${fixtures()}/dead-button.html` });
    expect(res.body).toMatchObject({ success: false, status: 'failed', code: 'TASK_LOOP_DETECTED' });
    const requests = await modelRequests(t);
    expect(requests).toHaveLength(5);
    const said = (r: any) => JSON.stringify(r.body.messages);
    expect(said(requests[2])).not.toContain('Note: you have now chosen click_element');
    expect(said(requests[3])).toContain('Note: you have now chosen click_element with the same arguments 3 times in a row');
    // The session goes on: the next task's conversation is well formed (every call answered).
    const next = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t2} say where you are` });
    expect(next.body).toMatchObject({ success: true, type: 'task_completed', data: { message: 'Still here: Dead button' } });
    const messages = (await modelRequests(t2))[0].body.messages as any[];
    const calls = messages.flatMap((m) => (m.tool_calls ?? []).map((c: any) => c.id));
    const answered = new Set(messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id));
    expect(calls.filter((id) => !answered.has(id))).toEqual([]);
  });

  it('refuses go_back on the task\'s first page, so the agent stays on the site; back after a link works', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const t = token('back');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'go_back', args: {} },
        { tool: 'click_element', args: { index: { ref: 'About' } } },
        { tool: 'go_back', args: {} },
        { tool: 'done', args: { message: 'Back on: {{find:Title: ([^\\n]+)}}' } },
      ],
    });
    const s = await startSession(key);
    const res = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} look around`, startingUrl: `${fixtures()}/index.html` });
    expect(res.body).toMatchObject({ success: true, type: 'task_completed', data: { message: 'Back on: Fixture Home' } });
    const requests = await modelRequests(t);
    const said = (r: any) => JSON.stringify(r.body.messages);
    // The first go_back is answered with where the tab opened; the page is still the site's.
    expect(said(requests[1])).toContain(`there is no earlier page in this tab; it opened at ${fixtures()}/index.html`);
    expect(said(requests[1])).not.toContain('about:blank');
    expect(said(requests[3])).toContain(`Went back; page is now ${fixtures()}/index.html`);
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('answers pending after the inline wait, then completes by polling; a second task meanwhile is refused', async () => {
    const { apiKey: key } = await createUser();
    const t = token('slow');
    // The model answers well after the short inline wait.
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'slow and done' }, delayMs: 6000 }] });
    const own = await shortWaitApi();
    const send = (sessionId: string, message: Record<string, unknown>) => api(own.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message } });
    const s = await startSession(key);
    const started = send(s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} take your time` });
    await new Promise((r) => setTimeout(r, 1500));
    const second = await send(s.sessionId, { actionType: 'newTask', newState: 'start', prompt: 'another' });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ success: false, code: 'TASK_ALREADY_RUNNING' });

    const res = await started;
    expect(res.body).toMatchObject({ success: true, status: 'pending', pending: true, taskId: expect.any(String) });
    expect(res.body.pollUrl).toBe(`${own.baseUrl}/task/${s.sessionId}/${res.body.taskId}`);
    const running = await poll(s.sessionId, res.body.taskId);
    expect(running.body).toMatchObject({ success: true, status: 'running', usage: expect.any(Object) });
    const done = await pollUntil(s.sessionId, res.body.taskId, 'task_completed');
    expect(done).toMatchObject({ data: { message: 'slow and done' }, completedAt: expect.any(String) });
    expect((await api(base(), 'GET', `/task/${s.sessionId}/task_unknown`)).status).toBe(404);
    await send(s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('pauses, resumes and stops a task with the confirmations', async () => {
    const { apiKey: key } = await createUser();
    const t = token('ctl');
    await registerScript(model(), { match: t, steps: [{ text: 'Waiting for the list to load.', tool: 'wait', args: { seconds: 0.5 }, delayMs: 300 }] });
    const s = await startSession(key, { prompt: `${t} keep waiting` });
    expect(s.taskId).toEqual(expect.any(String));
    await pollUntil(s.sessionId, s.taskId!, 'running');
    expect((await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'pause' })).body).toEqual({ success: true, message: 'Task paused' });
    expect((await poll(s.sessionId, s.taskId!)).body.status).toBe('paused');
    const requestsWhilePaused = (await modelRequests(t)).length;
    await new Promise((r) => setTimeout(r, 1500));
    expect((await modelRequests(t)).length).toBeLessThanOrEqual(requestsWhilePaused + 1);
    expect((await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'resume' })).body).toEqual({ success: true, message: 'Task resumed' });
    expect((await poll(s.sessionId, s.taskId!)).body.status).toBe('running');
    const resumeFromRunning = await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'resume' });
    expect(resumeFromRunning.status).toBe(409);
    const stopAt = Date.now();
    expect((await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'stop' })).body).toEqual({ success: true, message: 'Task stopped' });
    const stopped = await pollUntil(s.sessionId, s.taskId!, 'stopped', 5000);
    expect(Date.now() - stopAt).toBeLessThan(3000);
    // a stopped task carries what the agent had said so far
    expect(stopped).toMatchObject({ success: true, status: 'stopped', usage: { prompt_tokens: expect.any(Number) }, data: { message: 'Waiting for the list to load.' } });
    // the session lives on: a new task can start
    const t2 = token('after-stop');
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: 'second task done' } }] });
    const next = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t2} go` });
    expect(next.body).toMatchObject({ type: 'task_completed', data: { message: 'second task done' } });
    expect((await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' })).body).toEqual({ success: true, message: 'Session terminated' });
  });

  it('ends a task that exceeds maxDuration with TASK_TIMEOUT and its usage', async () => {
    const { apiKey: key } = await createUser();
    const t = token('timeout');
    await registerScript(model(), { match: t, steps: [{ tool: 'wait', args: { seconds: 0.2 }, delayMs: 800, usage: { prompt_tokens: 100, completion_tokens: 10 } }] });
    const s = await startSession(key);
    const res = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} forever`, maxDuration: 3000 });
    expect(res.body).toMatchObject({ success: false, status: 'failed', code: 'TASK_TIMEOUT', error: expect.stringContaining('3000') });
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(res.body.usage.inputTokens).toBe(res.body.usage.prompt_tokens);
    expect(res.body.usage.outputTokens).toBe(res.body.usage.completion_tokens);
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('stops before the input token budget is exceeded', async () => {
    const { apiKey: key } = await createUser();
    const t = token('budget');
    await registerScript(model(), { match: t, steps: [{ tool: 'scroll', args: { direction: 'down' }, usage: { prompt_tokens: 900, completion_tokens: 10 } }] });
    const s = await startSession(key);
    const res = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} look around`, startingUrl: `${fixtures()}/about.html`, maxInputTokens: 1000 });
    expect(res.body).toMatchObject({ success: false, status: 'failed', code: 'TOKEN_BUDGET_EXCEEDED' });
    expect(res.body.usage.prompt_tokens).toBeLessThanOrEqual(1000);
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('counts and charges the tokens of a step cut short by a pause, also against maxInputTokens', async () => {
    const { userId, apiKey: key } = await createUser({ balance: 10 });
    const t = token('cut-step');
    await registerScript(model(), { match: t, steps: [{ tool: 'wait', args: { seconds: 10 }, usage: { prompt_tokens: 5000, completion_tokens: 100 } }] });
    const s = await startSession(key, { prompt: `${t} wait a while`, maxInputTokens: 6000 });
    await waitFor(async () => (await modelRequests(t)).length >= 1, 15_000, 100);
    await new Promise((r) => setTimeout(r, 300)); // the model answered: the step is in its 10 s wait
    expect((await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'pause' })).body.message).toBe('Task paused');
    // the cut step's tokens are counted as soon as its cancellation comes back from the worker
    const paused = await waitFor(async () => {
      const r = await poll(s.sessionId, s.taskId!);
      return r.body.usage?.prompt_tokens > 0 ? r : null;
    }, 15_000, 200);
    expect(paused.body).toMatchObject({ status: 'paused', usage: { prompt_tokens: 5000, completion_tokens: 100 } });
    // 1000 input tokens are left: the next step cannot afford its model call
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'resume' });
    const failed = await pollUntil(s.sessionId, s.taskId!, 'failed', 15_000);
    expect(failed).toMatchObject({ code: 'TOKEN_BUDGET_EXCEEDED', usage: { prompt_tokens: 5000, completion_tokens: 100 } });
    expect(failed.usage.cost).toBeCloseTo(0.0052, 6);
    expect((await modelRequests(t)).length).toBe(1);
    const charged = await waitFor(async () => {
      const u = (await admin(['users', 'list'])).json.users.find((x: any) => x.userId === userId);
      return u.balance < 10 ? u : null;
    }, 10_000);
    expect(charged.balance).toBeCloseTo(10 - 0.0052, 6);
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('refuses an empty or blank prompt with INVALID_TASK_DETAILS and runs nothing', async () => {
    const { userId, apiKey: key } = await createUser();
    for (const prompt of ['', '  \n\t ']) {
      for (const route of ['/start/start-session', '/start/run-task']) {
        const r = await api(base(), 'POST', route, { key, body: { task: { prompt, startingUrl: `${fixtures()}/index.html` } } });
        expect(r.status).toBe(400);
        expect(r.body).toMatchObject({ success: false, code: 'INVALID_TASK_DETAILS', details: { field: 'task.prompt' } });
      }
    }
    const s = await startSession(key);
    for (const extra of [{}, { prompt: '' }, { prompt: '   ' }]) {
      const r = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', startingUrl: `${fixtures()}/index.html`, ...extra });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ success: false, code: 'INVALID_TASK_DETAILS', message: 'message.prompt must not be empty', details: { field: 'message.prompt' } });
    }
    // nothing started: the one session is the user's only one, and a real task runs at once
    expect((await admin(['users', 'list'])).json.users.find((x: any) => x.userId === userId).activeSessions).toBe(1);
    const t = token('after-empty');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'ran' } }] });
    expect((await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} go` })).body).toMatchObject({ type: 'task_completed' });
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('ends a session with the contract reasons, readable afterwards by its owner only', async () => {
    const { apiKey: key } = await createUser();
    const other = await createUser();
    const t = token('reasons');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'done here' } }] });
    const endOf = (sessionId: string, k = key) =>
      waitFor(async () => {
        const r = await api(base(), 'GET', `/start/sessions/${sessionId}/events`, { key: k });
        return r.body.events?.some((e: any) => e.event === 'end_session') ? r : null;
      }, 15_000);
    // a task that asked to close its session
    const s = await startSession(key);
    const own = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} a`, terminateOnCompletion: true });
    expect(own.body.type).toBe('task_completed');
    const first = await endOf(s.sessionId);
    expect(first.body).toMatchObject({ success: true, sessionId: s.sessionId, status: 'completed', endReason: 'terminateOnCompletion', hasMore: false });
    const events = first.body.events;
    expect(events.map((e: any) => e.event)).toEqual([...Array(events.length - 1).fill('message'), 'end_session']);
    expect(events.at(-1)).toMatchObject({ reason: 'terminateOnCompletion', seq: first.body.lastSeq });
    expect(events.find((e: any) => e.type === 'task_completed')).toMatchObject({ taskId: own.body.taskId, data: { message: 'done here' } });
    const later = await api(base(), 'GET', `/start/sessions/${s.sessionId}/events?after=${events.at(-2).seq}`, { key });
    expect(later.body.events.map((e: any) => e.seq)).toEqual([events.at(-1).seq]);
    expect((await api(base(), 'GET', `/start/sessions/${s.sessionId}/events?after=-1`, { key })).body).toMatchObject({ code: 'INVALID_PARAMETER' });
    const foreign = await api(base(), 'GET', `/start/sessions/${s.sessionId}/events`, { key: other.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ success: false, code: 'SESSION_NOT_FOUND' });
    expect((await api(base(), 'GET', `/start/sessions/${s.sessionId}/events`)).status).toBe(401);
    // run-task: the session closes because its one task ended
    const run = await api(base(), 'POST', '/start/run-task', { key, body: { task: { prompt: `${t} b` } } });
    expect(run.body.type).toBe('task_completed');
    expect((await endOf(run.body.sessionId)).body).toMatchObject({ endReason: 'completed', events: expect.arrayContaining([expect.objectContaining({ event: 'end_session', reason: 'completed' })]) });
  });

  it('asks a human through a guardrail and continues with the answer', async () => {
    const { apiKey: key } = await createUser();
    const t = token('otp');
    const code = String(100000 + Math.floor(Math.random() * 899999)).replace(/^\d/, '1');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Username' }, text: 'ada' } },
        { tool: 'input_text', args: { index: { ref: 'Password' }, text: 'pw-secret' } },
        { tool: 'click_element', args: { index: { ref: 'Sign in' } } },
        { tool: 'request_human_input', args: { type: 'two_factor_code', value: 'Enter the one-time code sent to your phone' } },
        { tool: 'input_text', args: { index: { ref: 'One-time code' }, text: '{{find:The human answered your request: (\\d+)}}' } },
        { tool: 'click_element', args: { index: { ref: 'Verify' } } },
        { tool: 'done', args: { message: '{{find:(Welcome back|Wrong code)}}' } },
      ],
    });
    const s = await startSession(key);
    const res = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} log in`, startingUrl: `${fixtures()}/login.html` });
    expect(res.body).toMatchObject({ success: true, type: 'guardrail_trigger', data: { type: 'two_factor_code', value: 'Enter the one-time code sent to your phone' } });
    const taskId = res.body.taskId;
    expect((await poll(s.sessionId, taskId)).body).toMatchObject({ status: 'guardrail_trigger', data: { type: 'two_factor_code' } });
    // 123456 is the code the fixture accepts
    const answer = await sendMessage(key, s.sessionId, { actionType: 'guardrail', newState: 'resume', prompt: '123456' });
    expect(answer.body).toMatchObject({ success: true, message: expect.any(String) });
    const done = await pollUntil(s.sessionId, taskId, 'task_completed');
    expect(done.data.message).toBe('Welcome back');
    const noGuardrail = await sendMessage(key, s.sessionId, { actionType: 'guardrail', newState: 'resume', prompt: code });
    expect(noGuardrail.status).toBe(409);

    // the human's answer and the typed password are not in Temporal's history in plain text
    const { client, close } = await temporalClient();
    try {
      const history = await client.workflow.getHandle(`session-${s.sessionId}`).fetchHistory();
      const raw = JSON.stringify(history);
      expect(raw).not.toContain('123456');
      expect(raw).not.toContain(t.slice(1, -1));
    } finally {
      await close();
    }
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('keeps the context of earlier tasks for a follow-up task', async () => {
    const { apiKey: key } = await createUser();
    const t1 = token('first');
    const t2 = token('followup');
    await registerScript(model(), { match: t1, steps: [{ tool: 'done', args: { message: 'The answer is {{find:The answer is (\\d+)}}' } }] });
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: 'Earlier I found {{find:The answer is (\\d+)}}' } }] });
    const s = await startSession(key);
    const first = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t1} find the answer`, startingUrl: `${fixtures()}/about.html` });
    expect(first.body.data.message).toBe('The answer is 42');
    await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: 'navigate away', startingUrl: `${fixtures()}/index.html`, maxDuration: 1000 }).catch(() => undefined);
    const second = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t2} what was the answer?`, startingUrl: `${fixtures()}/index.html` });
    expect(second.body).toMatchObject({ type: 'task_completed', data: { message: 'Earlier I found 42' } });
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('continues a long session as new, keeping its browser and the context of its tasks', async () => {
    // scripts/test.sh asks Temporal to suggest continue-as-new after 300 history events
    const { apiKey: key } = await createUser();
    const s = await startSession(key);
    const { client, close } = await temporalClient();
    try {
      const runs = async () => {
        const list = [];
        for await (const e of client.workflow.list({ query: `WorkflowId = "session-${s.sessionId}"` })) list.push(e);
        return list;
      };
      let i = 0;
      for (; i < 7 && (await runs()).length < 2; i++) {
        const t = token(`long${i}`);
        const scrolls = Array.from({ length: 12 }, (_, k) => ({ tool: 'scroll', args: { direction: k % 2 ? 'up' : 'down' } }));
        await registerScript(model(), { match: t, steps: [...scrolls, { tool: 'done', args: { message: `round ${i} done` } }] });
        const r = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} scroll`, ...(i === 0 ? { startingUrl: `${fixtures()}/big.html` } : {}) });
        // a loaded machine may take longer than the inline wait for 13 steps: then the poll answers
        const body = r.body.status === 'pending' ? await pollUntil(s.sessionId, r.body.taskId, 'task_completed', 90_000) : r.body;
        expect(body).toMatchObject({ type: 'task_completed', data: { message: `round ${i} done` } });
      }
      const executions = await waitFor(async () => {
        const list = await runs();
        return list.length >= 2 ? list : null;
      }, 10_000);
      expect(executions.map((e) => e.status.name)).toContain('CONTINUED_AS_NEW');
      // the new run has the same browser (same page) and the earlier tasks' outcomes
      const t = token('after-can');
      await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: '{{find:[\\s\\S]*Outcome \\(task_completed\\): (round \\d+ done)}} on {{find:Title: ([^\\n]+)}}' } }] });
      const after = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} what happened?` });
      expect(after.body.data.message).toBe(`round ${i - 1} done on ${await bigTitle()}`);
    } finally {
      await close();
    }
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('run-task runs one task in a session that is gone afterwards', async () => {
    const { apiKey: key } = await createUser();
    const t = token('run');
    await registerScript(model(), { match: t, steps: [{ tool: 'click_element', args: { index: { ref: 'About' } } }, { tool: 'done', args: { message: '{{find:(The answer is \\d+)}}' } }] });
    const res = await api(base(), 'POST', '/start/run-task', { key, body: { task: { prompt: `${t} open about`, startingUrl: `${fixtures()}/index.html` } } });
    expect(res.body).toMatchObject({ success: true, type: 'task_completed', data: { message: 'The answer is 42' } });
    const after = await waitFor(async () => {
      const r = await sendMessage(key, res.body.sessionId, { actionType: 'state', newState: 'terminate' });
      return r.status === 404 ? r : null;
    }, 10_000);
    expect(after.body.code).toBe('SESSION_NOT_FOUND');
    expect((await poll(res.body.sessionId, res.body.taskId)).body.status).toBe('task_completed');
  });

  it('refuses a task with 402 when the balance is used up', async () => {
    const { userId, apiKey: key } = await createUser({ balance: 1 });
    const s = await startSession(key);
    await admin(['users', 'topup', '--user', userId, '--amount=-1']);
    const res = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: 'anything' });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ success: false, code: 'INSUFFICIENT_BALANCE', details: { balance: 0, required: expect.any(Number) } });
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('fails with the contract codes: NAVIGATION_TIMEOUT, ELEMENT_NOT_FOUND, model errors', async () => {
    const { apiKey: key } = await createUser();
    const s = await startSession(key);
    const nav = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: 'open it', startingUrl: `${fixtures()}/hang` });
    expect(nav.body).toMatchObject({ success: false, code: 'NAVIGATION_TIMEOUT', details: { url: `${fixtures()}/hang`, timeout: expect.any(Number) } });

    const t = token('missing');
    await registerScript(model(), { match: t, steps: [{ tool: 'click_element', args: { index: 99999 } }] });
    const missing = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} click`, startingUrl: `${fixtures()}/index.html` });
    expect(missing.body).toMatchObject({ success: false, code: 'ELEMENT_NOT_FOUND' });
    // the failure was reported back to the model before the task gave up
    const reqs = await modelRequests(t);
    expect(JSON.stringify(reqs[1])).toContain('Action failed');

    const t2 = token('auth');
    await registerScript(model(), { match: t2, steps: [{ httpError: 401, message: 'bad key' }] });
    const auth = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t2} anything` });
    expect(auth.body).toMatchObject({ success: false, code: 'LLM_AUTH_FAILED' });

    const t3 = token('badargs');
    await registerScript(model(), { match: t3, steps: [{ rawToolCall: { name: 'click_element', arguments: '{"index": "first"' } }, { tool: 'done', args: { message: 'recovered' } }] });
    const bad = await sendMessage(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t3} go` });
    expect(bad.body).toMatchObject({ type: 'task_completed', data: { message: 'recovered' } });
    await sendMessage(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('loses no task when the API restarts during it', async () => {
    const { apiKey: key } = await createUser();
    const t = token('restart');
    await registerScript(model(), { match: t, steps: [{ tool: 'wait', args: { seconds: 0.1 }, delayMs: 1500 }, { tool: 'wait', args: { seconds: 0.1 }, delayMs: 1500 }, { tool: 'done', args: { message: 'survived the restart' } }] });
    const apiA = await shortWaitApi();
    const res = await api(apiA.baseUrl, 'POST', '/start/run-task', { key, body: { task: { prompt: `${t} slow` } } });
    expect(res.body).toMatchObject({ status: 'pending' });
    await apiA.stop('SIGKILL');
    const apiB = await startService({ ROLE: 'api' });
    try {
      const done = await waitFor(async () => {
        const r = await api(apiB.baseUrl, 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`);
        return r.body.status === 'task_completed' ? r.body : null;
      }, 30_000);
      expect(done.data.message).toBe('survived the restart');
    } finally {
      await apiB.stop();
    }
  });
});
