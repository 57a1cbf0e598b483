/**
 * API keys with an expiry, as an operator makes them with the admin CLI and a client
 * meets them over HTTP.
 */
import { api, waitFor } from '../support/http';
import { admin, createUser } from '../support/service';

const base = () => process.env.TEST_API_URL!;

describe('API keys with an expiry', () => {
  it('refuses a key past its expiry with 401 API_KEY_EXPIRED and lists when each key expires', async () => {
    const { userId, apiKey: lasting } = await createUser();
    const short = await admin(['keys', 'create', '--user', userId, '--expires-in', '2s']);
    expect(short.code).toBe(0);
    expect(short.json).toMatchObject({ userId, apiKey: expect.stringMatching(/^bas_/), expiresAt: expect.any(String) });
    const month = await admin(['keys', 'create', '--user', userId, '--expires-in=30d']);
    expect(Date.parse(month.json.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const refused = await waitFor(async () => {
      const r = await api(base(), 'GET', '/environments', { key: short.json.apiKey });
      return r.status === 401 ? r : null;
    }, 10_000, 250);
    expect(refused.body).toEqual({ success: false, code: 'API_KEY_EXPIRED', error: 'API key expired', message: 'API key expired' });
    // A key whose expiry lies ahead works like any other; the user's key without one too; a wrong key is still INVALID_API_KEY.
    expect((await api(base(), 'GET', '/environments', { key: month.json.apiKey })).status).toBe(200);
    expect((await api(base(), 'GET', '/environments', { key: lasting })).status).toBe(200);
    expect((await api(base(), 'GET', '/environments', { key: 'bas_not-a-key' })).body.code).toBe('INVALID_API_KEY');

    const listed = await admin(['keys', 'list', '--user', userId]);
    const byId = Object.fromEntries(listed.json.keys.map((k: any) => [k.keyId, k.expiresAt]));
    expect(byId[short.json.keyId]).toBe(short.json.expiresAt);
    expect(byId[month.json.keyId]).toBe(month.json.expiresAt);
    expect(Object.values(byId)).toContain(null);
  });

  it('refuses a malformed expiry in the CLI without making a key', async () => {
    const { userId } = await createUser();
    const bad = await admin(['keys', 'create', '--user', userId, '--expires-in', '30']);
    expect(bad.code).toBe(2);
    expect(bad.json.error).toMatch(/--expires-in must be a positive duration/);
    expect((await admin(['keys', 'list', '--user', userId])).json.keys).toHaveLength(1);
  });
});
