import { createLogger } from '../../logger';
import type { Store } from '../../store/store';
import { requireApiKey } from './auth';

const run = async (store: Partial<Store>, authorization?: string) => {
  const mw = requireApiKey({ store: store as Store, logger: createLogger('silent') });
  const req: any = { get: (h: string) => (h.toLowerCase() === 'authorization' ? authorization : undefined) };
  let passed: any = 'not called';
  await mw(req, {} as any, (err?: unknown) => (passed = err));
  return { err: passed as any, req };
};

describe('requireApiKey', () => {
  const user = { _id: 'usr_1', status: 'active' };
  const store = (over: Partial<Record<string, any>> = {}) => ({
    apiKeys: { findActive: async (k: string) => (k === 'good' ? { userId: 'usr_1' } : null), ...over.apiKeys },
    users: { get: async () => user, ...over.users },
  });

  it('accepts a live key and binds the user', async () => {
    const { err, req } = await run(store() as any, 'Bearer good');
    expect(err).toBeUndefined();
    expect(req.user).toBe(user);
  });

  it.each([
    [undefined, 401, 'API key required'],
    ['Basic abc', 401, 'API key required'],
    ['Bearer bad', 401, 'Invalid or revoked API key'],
  ])('answers %s with %d %s', async (header, status, message) => {
    const { err } = await run(store() as any, header);
    expect(err.status).toBe(status);
    expect(err.message).toBe(message);
  });

  it('refuses an expired key with 401 API_KEY_EXPIRED and accepts one not yet expired', async () => {
    const keyWith = (expiresAt: Date) => store({ apiKeys: { findActive: async () => ({ userId: 'usr_1', expiresAt }) } }) as any;
    const { err } = await run(keyWith(new Date(Date.now() - 1000)), 'Bearer good');
    expect([err.status, err.code, err.message]).toEqual([401, 'API_KEY_EXPIRED', 'API key expired']);
    const live = await run(keyWith(new Date(Date.now() + 60_000)), 'Bearer good');
    expect(live.err).toBeUndefined();
  });

  it('refuses a deactivated account with 403', async () => {
    const { err } = await run(store({ users: { get: async () => ({ ...user, status: 'deactivated' }) } }) as any, 'Bearer good');
    expect(err.status).toBe(403);
    expect(err.message).toBe('Account is deactivated');
  });

  it('turns a failing lookup into 500 Authentication error', async () => {
    const { err } = await run(store({ apiKeys: { findActive: async () => { throw new Error('db down'); } } }) as any, 'Bearer good');
    expect(err.status).toBe(500);
    expect(err.toBody()).toMatchObject({ success: false, message: 'Authentication error' });
  });
});
