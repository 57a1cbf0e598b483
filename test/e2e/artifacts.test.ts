import { api, waitFor } from '../support/http';
import { registerScript } from '../support/scripted-model';
import { createUser } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

describe('task artifacts', () => {
  it('lists the requests of the task in data.network, with secrets masked', async () => {
    const { apiKey: key } = await createUser();
    const t = token('network');
    await registerScript(model(), { match: t, steps: [{ tool: 'wait', args: { seconds: 0.3 } }, { tool: 'done', args: { message: '{{find:(fetched)}}' } }] });
    const res = await api(base(), 'POST', '/start/run-task', { key, body: { task: { prompt: `${t} load it`, startingUrl: `${fixtures()}/requests.html` } } });
    expect(res.body).toMatchObject({ type: 'task_completed', data: { message: 'fetched', files: [] } });
    const [entry] = res.body.data.network;
    expect(entry).toMatchObject({ id: expect.any(String), taskId: res.body.taskId });
    const urls = entry.urls.map((u: any) => u.url);
    expect(urls).toContain(`${fixtures()}/requests.html`);
    const fetched = urls.find((u: string) => u.includes('about.html?'));
    expect(fetched).toBe(`${fixtures()}/about.html?api_key=***&page=2`);
    expect(JSON.stringify(res.body)).not.toContain('SECRET123');
    expect(entry.urls.every((u: any) => typeof u.timestamp === 'number' && u.timestamp > Date.now() - 120_000)).toBe(true);
    // polling gives the same, after the session is gone
    const polled = await waitFor(async () => {
      const r = await api(base(), 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`);
      return r.body.status === 'task_completed' ? r.body : null;
    }, 10_000);
    expect(polled.data.network).toEqual(res.body.data.network);
  });
});
