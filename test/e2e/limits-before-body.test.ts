/**
 * The rate-limited calls read their body only after the API key and the limit: a request
 * without a key is a 401 whatever its body, and a malformed or oversized body still counts
 * against the limit and carries its headers.
 */
import { createUser } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const post = (path: string, body: string, key?: string) =>
  fetch(`${base()}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body });

describe('rate-limited calls and their bodies', () => {
  it('answer a request without an API key with 401, however malformed or large its body', async () => {
    for (const path of ['/start/start-session', '/start/run-task', '/start/send-message', '/v1/chat/completions', '/START/start-session/']) {
      const bad = await post(path, '{"task": ');
      expect([path, bad.status]).toEqual([path, 401]);
      const big = await post(path, JSON.stringify({ pad: 'x'.repeat(1_100_000) }));
      expect([path, big.status]).toEqual([path, 401]);
    }
  });

  it('count a malformed or oversized body against the limit, with the limit headers, until it refuses', async () => {
    const { apiKey: key } = await createUser();
    const first = await post('/start/start-session', '{"task": ', key);
    expect(first.status).toBe(400);
    expect(await first.json()).toMatchObject({ success: false });
    expect(first.headers.get('x-ratelimit-limit')).toBe('10');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('9');

    const big = await post('/start/send-message', JSON.stringify({ pad: 'x'.repeat(1_100_000) }), key);
    expect(big.status).toBe(413);
    expect(big.headers.get('x-ratelimit-remaining')).toBe('8');

    const openai = await post('/v1/chat/completions', '{"model": ', key);
    expect(openai.status).toBe(400);
    expect(await openai.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    expect(openai.headers.get('x-ratelimit-remaining')).toBe('7');

    for (let i = 0; i < 7; i++) expect((await post('/start/run-task', 'not json', key)).status).toBe(400);
    // The limit is spent on malformed requests alone: a good one is refused now.
    const refused = await post('/start/start-session', '{}', key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
  });
});
