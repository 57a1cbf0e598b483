/**
 * Read your writes: once an answer says a task (or a session) reached a state, every later
 * read shows that state or a later one: the task, its recording, the events, a replay of it,
 * and the user's session slot after a terminate.
 */
import { api } from '../support/http';
import { registerScript } from '../support/scripted-model';
import { createUser } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

describe('read your writes', () => {
  it('a task answered task_completed reads as completed everywhere at once, and can be replayed at once', async () => {
    const { apiKey: key } = await createUser({ balance: 50 });
    const started = await api(base(), 'POST', '/start/start-session', { key, body: {} });
    expect(started.status).toBe(200);
    const { sessionId } = started.body;
    // Several rounds: the stale read was a race between the answer and the stored record.
    for (let round = 0; round < 3; round++) {
      const t = token(`ryw-${round}`);
      await registerScript(model(), { match: t, steps: [{ tool: 'navigate', args: { url: `${fixtures()}/form.html` } }, { tool: 'done', args: { message: `read back ${round}` } }] });
      const answer = await api(base(), 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${t} open the form` } } });
      expect(answer.body).toMatchObject({ type: 'task_completed', data: { message: `read back ${round}` } });
      const { taskId } = answer.body;
      // No waiting from here on: each read must already see the end.
      const [task, recording, events] = await Promise.all([
        api(base(), 'GET', `/task/${sessionId}/${taskId}`, { key }),
        api(base(), 'GET', `/task/${sessionId}/${taskId}/recording`, { key }),
        api(base(), 'GET', `/start/sessions/${sessionId}/events`, { key }),
      ]);
      expect([round, task.body.status]).toEqual([round, 'task_completed']);
      expect([round, recording.body.status]).toEqual([round, 'task_completed']);
      expect(events.body.events.some((e: any) => e.type === 'task_completed' && e.taskId === taskId)).toBe(true);
      const replay = await api(base(), 'POST', '/start/run-task', { key, body: { task: { prompt: '', replayOf: taskId } } });
      expect([round, replay.status, replay.body.code]).toEqual([round, 200, undefined]);
    }
    await api(base(), 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'state', newState: 'terminate' } } });
  });

  it('a session answered terminated has given back its slot: the next start succeeds at once', async () => {
    const { apiKey: key } = await createUser({ sessionLimit: 1 });
    for (let round = 0; round < 3; round++) {
      const started = await api(base(), 'POST', '/start/start-session', { key, body: {} });
      expect([round, started.status, started.body.code]).toEqual([round, 200, undefined]);
      const ended = await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: started.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
      expect(ended.body).toEqual({ success: true, message: 'Session terminated' });
    }
  });
});
