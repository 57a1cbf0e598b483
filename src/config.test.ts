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
    ['CHAT_API_BASE_URLS', '{"telegram":"not a url"}'],
    ['CHAT_API_BASE_URLS', '{"myspace":"http://x"}'],
  ])('names %s when its value is bad', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  it('reads the proxy trust and the chat API roots', () => {
    expect(loadConfig({}).TRUST_PROXY).toBe('loopback');
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).TRUST_PROXY).toBe('10.0.0.0/8');
    expect(loadConfig({ CHAT_API_BASE_URLS: '{"telegram":"http://127.0.0.1:9000"}' }).CHAT_API_BASE_URLS).toEqual({ telegram: 'http://127.0.0.1:9000' });
    expect(loadConfig({}).CHAT_API_BASE_URLS).toEqual({});
  });
});
