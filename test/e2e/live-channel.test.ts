import type { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { api, waitFor } from '../support/http';
import { startHttpProxy } from '../support/test-proxies';
import { registerScript } from '../support/scripted-model';
import { createUser, startService, type ServiceProcess, temporalClient } from '../support/service';
import { connectError, connectSession, emitWithAck } from '../support/socket';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(12, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
const send = (baseUrl: string, key: string, sessionId: string, message: Record<string, unknown>) => api(baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message } });

describe('the live channel', () => {
  it('refuses unknown sessions at connect with a clear reason', async () => {
    expect(await connectError(base(), {})).toMatch(/sessionId is required/);
    expect(await connectError(base(), { sessionId: 'f'.repeat(32) })).toBe('Session not found');
  });

  it('delivers a task’s events in order, replays missed ones, takes messages and ends with end_session', async () => {
    const { apiKey: key } = await createUser();
    const t = token('events');
    await registerScript(model(), {
      match: t,
      steps: [
        { text: 'I will open the about page.', tool: 'click_element', args: { index: { ref: 'About' } } },
        { tool: 'done', args: { message: '{{find:(The answer is \\d+)}}' } },
      ],
    });
    const s = (await api(base(), 'POST', '/start/start-session', { key, body: {} })).body;
    const live = await connectSession(base(), { sessionId: s.sessionId });
    const sockets = await api(base(), 'GET', '/start/active-sockets', { key });
    expect(sockets.body).toEqual({ success: true, sessions: [{ sessionId: s.sessionId, sockets: 1 }] });

    const res = await send(base(), key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} open about`, startingUrl: `${fixtures()}/index.html` });
    expect(res.body.type).toBe('task_completed');
    const done = await live.waitFor((r) => r.event === 'message' && r.payload.type === 'task_completed');
    expect(done.payload).toMatchObject({ sessionId: s.sessionId, taskId: res.body.taskId, data: { message: 'The answer is 42' }, usage: { total_tokens: expect.any(Number) } });
    const messages = live.received.filter((r) => r.event === 'message').map((r) => r.payload);
    expect(messages.map((m) => m.type)).toEqual(expect.arrayContaining(['response_update', 'agent', 'action', 'task_completed']));
    const click = messages.find((m) => m.type === 'action' && m.data.name === 'click_element');
    expect(click.data.target).toMatch(/About/);
    expect(messages.find((m) => m.type === 'agent').content).toBe('I will open the about page.');
    const seqs = messages.map((m) => m.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(messages.every((m) => typeof m.timestamp === 'number')).toBe(true);

    // a client that missed everything after seq 1 gets it first, in order
    const replay = await connectSession(base(), { sessionId: s.sessionId, lastSeq: seqs[0] });
    await replay.waitFor((r) => r.payload?.type === 'task_completed');
    const replayed = replay.received.filter((r) => r.event === 'message').map((r) => r.payload.seq);
    expect(replayed).toEqual(seqs.slice(1));

    // client-to-server messages with the same validation as send-message
    const bad = await emitWithAck(live.socket, { actionType: 'state', newState: 'explode' });
    expect(bad).toMatchObject({ success: false, code: 'INVALID_PARAMETER' });
    const t2 = token('socket-task');
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: 'from the socket' } }] });
    const viaSocket = await emitWithAck(live.socket, { actionType: 'newTask', newState: 'start', prompt: `${t2} go` });
    expect(viaSocket).toMatchObject({ success: true, type: 'task_completed', data: { message: 'from the socket' } });
    // A task that fails: watchers get a message of type error with its code.
    const t3 = token('socket-fail');
    await registerScript(model(), { match: t3, steps: [{ tool: 'done', args: { message: 'the form is gone', success: false } }] });
    const failed = await emitWithAck(live.socket, { actionType: 'newTask', newState: 'start', prompt: `${t3} go` });
    expect(failed).toMatchObject({ success: false, status: 'failed', code: 'TASK_FAILED' });
    const failure = await live.waitFor((r) => r.event === 'message' && r.payload.type === 'error' && r.payload.taskId === failed.taskId);
    expect(failure.payload).toMatchObject({ type: 'error', code: 'TASK_FAILED', error: 'the form is gone', seq: expect.any(Number) });
    live.socket.emit('message', { actionType: 'guardrail', newState: 'resume' });
    const errorEvent = await live.waitFor((r) => r.event === 'error' && r.payload.code === 'MISSING_REQUIRED_FIELD');
    expect(errorEvent.payload.error).toMatch(/prompt/);

    const ended = await emitWithAck(live.socket, { actionType: 'state', newState: 'terminate' });
    expect(ended).toEqual({ success: true, message: 'Session terminated' });
    const end = await live.waitFor((r) => r.event === 'end_session');
    expect(end.payload).toMatchObject({ reason: 'terminated', seq: expect.any(Number) });
    await waitFor(async () => !live.socket.connected, 5000);
    replay.socket.close();
    expect(await connectError(base(), { sessionId: s.sessionId })).toMatch(/ended/);
    // an ended session's last events stay readable: the missed ones, then end_session
    const late = await connectSession(base(), { sessionId: s.sessionId, lastSeq: seqs[seqs.length - 1] });
    const lateEnd = await late.waitFor((r) => r.event === 'end_session');
    expect(lateEnd.payload).toEqual(end.payload);
    const lateSeqs = late.received.map((r) => r.payload.seq);
    expect(lateSeqs[0]).toBe(seqs[seqs.length - 1] + 1);
    expect(lateSeqs).toEqual([...lateSeqs].sort((a, b) => a - b));
    expect(late.received.some((r) => r.payload.type === 'task_completed' && r.payload.data.message === 'from the socket')).toBe(true);
    await waitFor(async () => !late.socket.connected, 5000);
    // A client that had everything hears the end again, with the seq and time it was published at.
    const caughtUp = await connectSession(base(), { sessionId: s.sessionId, lastSeq: end.payload.seq });
    const endAgain = await caughtUp.waitFor((r) => r.event === 'end_session');
    expect(endAgain.payload).toEqual(end.payload);
    expect(endAgain.payload.timestamp).toEqual(expect.any(Number));
    // Every event a client received carries seq and timestamp; connection-local errors (answers to that socket, not part of the timeline) a timestamp.
    for (const r of [...live.received, ...late.received, ...caughtUp.received]) {
      if (r.event === 'error') expect([r.event, typeof r.payload.timestamp]).toEqual(['error', 'number']);
      else expect([r.event, typeof r.payload.seq, typeof r.payload.timestamp]).toEqual([r.event, 'number', 'number']);
    }
  });

  it('hands the browser to a human and back: takeover pauses, clicks, typing and keys land, release resumes', async () => {
    const { apiKey: key } = await createUser();
    const t = token('manual');
    await registerScript(model(), { match: t, steps: [{ tool: 'wait', args: { seconds: 0.3 }, delayMs: 200 }] });
    const s = (await api(base(), 'POST', '/start/start-session', { key, body: { task: { prompt: `${t} wait around`, startingUrl: `${fixtures()}/manual.html` } } })).body;
    const live = await connectSession(base(), { sessionId: s.sessionId });
    // the agent has loaded the page and works on it
    await live.waitFor((r) => r.payload?.type === 'action' && r.payload.data.name === 'wait');

    // out of range and unknown keys are refused before anything happens
    const low = await send(base(), key, s.sessionId, { actionType: 'interaction', action: { type: 'CLICK', x: 10, y: 100 } });
    expect(low.status).toBe(400);
    expect(low.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'message.action.y', value: 100, min: 155, max: 755 } });
    const wide = await send(base(), key, s.sessionId, { actionType: 'interaction', action: { type: 'DOUBLE_CLICK', x: 1025, y: 300 } });
    expect(wide.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'message.action.x', max: 1024 } });
    const key404 = await send(base(), key, s.sessionId, { actionType: 'interaction', action: { type: 'KEY_PRESS', key: 'Hyper' } });
    expect(key404.body.code).toBe('INVALID_PARAMETER');

    // a manual click while the agent works implies takeover: the task pauses
    const click = await send(base(), key, s.sessionId, { actionType: 'interaction', action: { type: 'CLICK', x: 200, y: 150 + 155 } });
    expect(click.body).toEqual({ success: true, message: 'CLICK performed' });
    expect((await api(base(), 'GET', `/task/${s.sessionId}/${s.taskId}`)).body.status).toBe('paused');
    await live.waitFor((r) => r.payload?.type === 'response_update' && /Manual control taken/.test(r.payload.data.message));
    // the rest over the socket, as the live view does (socket traffic has no rate limit)
    const interact = (action: Record<string, unknown>) => emitWithAck(live.socket, { actionType: 'interaction', action });
    expect(await interact({ type: 'DOUBLE_CLICK', x: 200, y: 150 + 155 })).toEqual({ success: true, message: 'DOUBLE_CLICK performed' });
    expect((await interact({ type: 'CLICK', x: 450, y: 110 + 155 })).success).toBe(true);
    expect((await interact({ type: 'TYPE', text: 'hi', humanLike: true })).success).toBe(true);
    expect((await interact({ type: 'KEY_PRESS', key: 'Enter' })).success).toBe(true);
    expect(await interact({ type: 'KEY_PRESS', key: 'Hyper' })).toMatchObject({ success: false, code: 'INVALID_PARAMETER' });
    await live.waitFor((r) => r.payload?.data?.name === 'manual_key_press');
    expect(live.received.filter((r) => r.payload?.type === 'action').map((r) => r.payload.data.name)).toEqual(
      expect.arrayContaining(['manual_click', 'manual_double_click', 'manual_type', 'manual_key_press']),
    );
    // while the human holds the browser the agent does nothing (a step already in flight may finish)
    const takenAt = live.received.findIndex((r) => r.payload?.type === 'response_update' && /Manual control taken/.test(r.payload.data.message));
    const agentActionsWhileManual = live.received.slice(takenAt).filter((r) => r.payload?.type === 'action' && !r.payload.data.name.startsWith('manual_'));
    expect(agentActionsWhileManual.length).toBeLessThanOrEqual(1);

    expect(await interact({ type: 'releaseControl' })).toEqual({ success: true, message: 'Control returned to the agent; the task resumes' });
    expect((await api(base(), 'GET', `/task/${s.sessionId}/${s.taskId}`)).body.status).toBe('running');
    expect(await emitWithAck(live.socket, { actionType: 'state', newState: 'stop' })).toEqual({ success: true, message: 'Task stopped' });
    const stopped = await waitFor(async () => {
      const r = await api(base(), 'GET', `/task/${s.sessionId}/${s.taskId}`);
      return r.body.status === 'stopped' ? r : null;
    }, 5000).catch(async (e) => {
      throw new Error(`${e.message}: ${JSON.stringify((await api(base(), 'GET', `/task/${s.sessionId}/${s.taskId}`)).body)} events: ${JSON.stringify(live.received.slice(-8))}`);
    });
    expect(stopped.body.usage).toEqual(expect.any(Object));

    // the agent sees the page as the human left it
    const t2 = token('after-manual');
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: '{{find:(clicks=\\d+ dblclicks=\\d+ typed=\\[[^\\]]*\\] keys=\\[[^\\]]*\\])}}' } }] });
    const seen = await send(base(), key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t2} report the status line` });
    // a double click also fires two clicks
    expect(seen.body.data.message).toBe('clicks=3 dblclicks=1 typed=[hi] keys=[Enter]');
    await send(base(), key, s.sessionId, { actionType: 'state', newState: 'terminate' });
    live.socket.close();
  });
});

describe('sessions survive their worker', () => {
  const isolated = () => ({ REDIS_URL: `${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6391'}/9`, TEMPORAL_TASK_QUEUE: `survive-${Date.now()}` });
  let env: Record<string, string>;
  let apiProc: ServiceProcess;
  const workers: ServiceProcess[] = [];
  let temporal: Client;
  let closeTemporal: () => Promise<void>;

  beforeAll(async () => {
    env = isolated();
    [apiProc] = await Promise.all([startService({ ROLE: 'api', ...env, ORPHAN_GRACE_MS: '60000' }), ...[0, 1].map(async () => workers.push(await startService({ ROLE: 'worker', ...env, WORKER_TTL_MS: '3000' })))]);
    ({ client: temporal, close: closeTemporal } = await temporalClient());
    await waitFor(async () => (await api(apiProc.baseUrl, 'GET', '/start/health')).body.instanceCount === 2, 20_000);
  });
  afterAll(async () => {
    await Promise.all([apiProc?.stop(), ...workers.map((w) => w.stop('SIGKILL'))]);
    await closeTemporal?.();
  });

  it('restores a session on another worker with its page, cookies, local storage and proxy', async () => {
    const { apiKey: key } = await createUser();
    const t = token('state');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: '{{find:(visits=\\d+ member=\\w+)}}' } }] });
    const proxy = await startHttpProxy('mover', 'mover-secret');
    const viaProxy = () => proxy.targets.filter((x) => x.includes('/state.html')).length;
    const s = (await api(apiProc.baseUrl, 'POST', '/start/start-session', { key, body: { proxy: { source: 'custom', type: 'http', host: '127.0.0.1', port: String(proxy.port), username: 'mover', password: 'mover-secret' } } })).body;
    const live = await connectSession(apiProc.baseUrl, { sessionId: s.sessionId });
    const first = await send(apiProc.baseUrl, key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} read state`, startingUrl: `${fixtures()}/state.html` });
    expect(first.body.data.message).toBe('visits=1 member=ada');
    const beforeMove = viaProxy();
    expect(beforeMove).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 2500)); // a snapshot is saved every 2 s

    const view = await temporal.workflow.getHandle(`session-${s.sessionId}`).query<{ workerId: string }>('session');
    const holder = workers.find((w) => w.output().includes(view.workerId));
    expect(holder).toBeDefined();
    const killedAt = Date.now();
    holder!.child.kill('SIGKILL');

    await live.waitFor((r) => r.event === 'instance:disconnected', 30_000);
    const back = await live.waitFor((r) => r.event === 'instance:reconnected', 30_000);
    process.stdout.write(`SIGKILL to the session active on the other worker: ${back.payload.timestamp - killedAt} ms; reported wait ${back.payload.waitedMs} ms\n`);
    expect(back.payload.workerId).not.toBe(view.workerId);
    // Restored after its lease timed out: a killed worker hands nothing over.
    expect(back.payload).toMatchObject({ waitedMs: expect.any(Number) });
    expect(back.payload.handedOver).toBeUndefined();

    const t2 = token('state-after');
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: '{{find:(visits=\\d+ member=\\w+)}} at {{find:(http://[^\\s]+/state.html)}}' } }] });
    const after = await send(apiProc.baseUrl, key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t2} read state again` });
    // the restored page was loaded again at the same URL: the visit counter went on, the cookie stayed
    expect(after.body.data.message).toBe(`visits=2 member=ada at ${fixtures()}/state.html`);
    // the new worker's browser went through the session's proxy too
    expect(viaProxy()).toBeGreaterThan(beforeMove);
    expect(proxy.refused).toBe(0);
    await send(apiProc.baseUrl, key, s.sessionId, { actionType: 'state', newState: 'terminate' });
    live.socket.close();
    await proxy.close();
  });

  describe('a worker that stalled past its lease', () => {
    it('takes its session back as it was, without a restore elsewhere', async () => {
      // One worker: a session it stopped answering for has nowhere else to go.
      const alive = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
      for (const w of alive.slice(1)) w.child.kill('SIGKILL');
      const worker = alive[0];
      await waitFor(async () => (await api(apiProc.baseUrl, 'GET', '/start/health')).body.instanceCount === 1, 20_000);
      const { apiKey: key } = await createUser();
      const t = token('stall');
      await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: '{{find:(visits=\\d+ member=\\w+)}}' } }] });
      const s = (await api(apiProc.baseUrl, 'POST', '/start/start-session', { key, body: {} })).body;
      const live = await connectSession(apiProc.baseUrl, { sessionId: s.sessionId });
      const first = await send(apiProc.baseUrl, key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} read state`, startingUrl: `${fixtures()}/state.html` });
      expect(first.body.data.message).toBe('visits=1 member=ada');
      const handle = temporal.workflow.getHandle(`session-${s.sessionId}`);
      const view = await handle.query<{ workerId: string }>('session');

      // Frozen until the server takes the lease for lost (12 s after its last beat, or later:
      // its timer fires late on a busy machine, so no fixed pause is long enough for sure).
      const leaseLost = async () => {
        const { events } = await handle.fetchHistory();
        const leases = new Set(events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'holdBrowser').map((e) => String(e.eventId)));
        return events!.some((e) => e.activityTaskTimedOutEventAttributes && leases.has(String(e.activityTaskTimedOutEventAttributes.scheduledEventId)));
      };
      worker.child.kill('SIGSTOP');
      try {
        await waitFor(leaseLost, 90_000, 500);
      } finally {
        worker.child.kill('SIGCONT');
      }
      try {
        await live.waitFor((r) => r.event === 'instance:disconnected', 30_000);
        const back = await live.waitFor((r) => r.event === 'instance:reconnected', 30_000);
        expect(back.payload.workerId).toBe(view.workerId);
      } catch (err) {
        // What the workflow did since, and what the worker said: the failure explains itself.
        const { events } = await handle.fetchHistory();
        const trail = events!.slice(-30).map((e) => `${e.eventId} ${proto.api.enums.v1.EventType[e.eventType!]} ${e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''}`);
        throw new Error(`${String(err)}\nhistory (last 30 events):\n${trail.join('\n')}\nworker output (tail):\n${worker.output().slice(-3000)}`);
      }

      // The same page in the same browser: not loaded again (a restore would count a second visit).
      const t2 = token('stall-after');
      await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: '{{find:(visits=\\d+ member=\\w+)}}' } }] });
      const after = await send(apiProc.baseUrl, key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t2} read state again` });
      expect(after.body).toMatchObject({ type: 'task_completed', data: { message: 'visits=1 member=ada' } });
      live.socket.close();
      await send(apiProc.baseUrl, key, s.sessionId, { actionType: 'state', newState: 'terminate' });
    }, 180_000);
  });
});

// A session at work whose only worker is gone for good (told, input refused meanwhile, then
// instance_lost with its task failed): saved-state.test.ts, 'saved browser state ends with its
// session', which kills the only worker of a service of its own for that too.
