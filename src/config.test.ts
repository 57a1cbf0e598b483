import { ConfigError, loadConfig } from './config';

describe('configuration', () => {
  it('has working embedded defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ PORT: 3000, PUBLIC_BASE_URL: 'http://localhost:3000', TEMPORAL_NAMESPACE: 'browser-agent', SESSION_IDLE_TIMEOUT_MS: 300000, INLINE_WAIT_MS: 50000, ROLE: 'all' });
  });

  it.each([
    ['PORT', 'abc'],
    ['MONGODB_URL', 'http://x'],
    ['REDIS_URL', 'nope'],
    ['TEMPORAL_ADDRESS', 'no-port'],
    ['LOG_LEVEL', 'loud'],
    ['LLM_PRICES', '{bad json'],
    ['PAYLOAD_ENCRYPTION_KEY', 'short'],
  ])('names %s when its value is bad', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });
});
