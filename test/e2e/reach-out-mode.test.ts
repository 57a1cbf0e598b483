/**
 * reachOutMode named explicitly needs someone to reach (decisions.md): an environment of the
 * user's with a chat connection. Without one it is a 400 naming the field, and nothing of
 * the session is started; left out (or off) the default applies silently.
 */
import { randomBytes } from 'node:crypto';
import { api } from '../support/http';
import { createUser } from '../support/service';

const base = () => process.env.TEST_API_URL!;

async function startAndEnd(key: string, body: Record<string, unknown>): Promise<void> {
  const started = await api(base(), 'POST', '/start/start-session', { key, body });
  expect([started.status, started.body.success, started.body.code]).toEqual([200, true, undefined]);
  const ended = await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: started.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
  expect(ended.status).toBe(200);
}

describe('reachOutMode', () => {
  it('given without an environment that has a chat connection is a 400 naming the field, and starts nothing', async () => {
    // One session at a time: a refused start that kept its slot would make the next start fail.
    const { apiKey: key } = await createUser({ sessionLimit: 1 });
    const bare = (await api(base(), 'POST', '/environments', { key, body: { name: 'no chat' } })).body.environment._id as string;
    const refusals: [string, Record<string, unknown>, RegExp][] = [
      ['/start/start-session', { reachOutMode: 'full' }, /reachOutMode full needs an environment with a chat connection.*none is given/],
      ['/start/start-session', { reachOutMode: 'guardrail_only', profileId: 'prof_x' }, /none is given/],
      ['/start/start-session', { reachOutMode: 'guardrail_only', environmentId: bare }, new RegExp(`environment ${bare} has none`)],
      ['/start/run-task', { reachOutMode: 'full', task: { prompt: 'say hi' } }, /none is given/],
    ];
    for (const [path, body, message] of refusals) {
      const refused = await api(base(), 'POST', path, { key, body });
      expect([path, refused.status]).toEqual([path, 400]);
      expect(refused.body).toMatchObject({ success: false, code: 'INVALID_PARAMETER', details: { parameter: 'reachOutMode', value: body.reachOutMode } });
      expect(refused.body.error).toMatch(message);
    }
    // None of them kept the user's one session slot.
    await startAndEnd(key, {});
  });

  it('left out, null or off starts the session silently, with or without an environment', async () => {
    const { apiKey: key } = await createUser();
    const bare = (await api(base(), 'POST', '/environments', { key, body: { name: 'no chat' } })).body.environment._id as string;
    await startAndEnd(key, { environmentId: bare });
    await startAndEnd(key, { reachOutMode: null, environmentId: bare });
    await startAndEnd(key, { reachOutMode: 'off' });
  });

  it('given with an environment that has a chat connection starts the session', async () => {
    const { apiKey: key } = await createUser();
    const id = (await api(base(), 'POST', '/environments', { key, body: { name: 'chat' } })).body.environment._id as string;
    const saved = await api(base(), 'PUT', `/environments/${id}/chat`, { key, body: { provider: 'telegram', botToken: `123456789:${randomBytes(20).toString('hex')}`, chatId: 42 } });
    expect(saved.status).toBe(200);
    await startAndEnd(key, { reachOutMode: 'full', environmentId: id });
  });
});
