import { ConfigError, loadConfig, shownValue } from './config';

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

  it.each([
    ['PAYLOAD_ENCRYPTION_KEY', 'short-but-secret'],
    ['VIEW_TOKEN_SECRET', 'tiny-secret'],
    ['REDIS_URL', 'redis-bad://:hunter2pass@redis:6379'],
    ['MONGODB_URL', 'http://admin:hunter2pass@db/x'],
    ['LLM_BASE_URL', 'ftp://api.example.com/v1?key=hunter2pass'],
    ['CHAT_API_BASE_URLS', '{"telegram":"ftp://bot:hunter2pass@x"'],
  ])('never echoes a secret in the error about %s', (name, value) => {
    const message = (() => {
      try {
        loadConfig({ [name]: value });
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    })();
    expect(message).toMatch(new RegExp(`^Invalid configuration:\\n  ${name}`));
    for (const secret of ['short-but-secret', 'tiny-secret', 'sk-live-abcdef', 'hunter2pass']) expect(message).not.toContain(secret);
  });

  it('shows what it may of a bad value', () => {
    expect(shownValue('PORT', 'abc')).toBe('"abc"');
    expect(shownValue('LLM_API_KEY', 'sk-123')).toBe('a value of 6 characters, not shown');
    expect(shownValue('MONGODB_URL', 'mongodb://app:pw@db:27017/x?authSource=admin')).toBe('"mongodb://app:***@db:27017/x?***"');
    expect(shownValue('REDIS_URL', 'redis://:pw@r:6379')).toBe('"redis://:***@r:6379"');
    expect(shownValue('HOST', undefined)).toBe('nothing');
  });

  it("turns Chromium's sandbox on unless the process runs as root", () => {
    expect(loadConfig({}).CHROMIUM_SANDBOX).toBe(process.getuid?.() !== 0);
    expect(loadConfig({ CHROMIUM_SANDBOX: 'true' }).CHROMIUM_SANDBOX).toBe(true);
    expect(loadConfig({ CHROMIUM_SANDBOX: 'false' }).CHROMIUM_SANDBOX).toBe(false);
    expect(loadConfig({}).SOCKET_MAX_PER_SESSION).toBe(20);
  });
});

describe('the model settings', () => {
  it('use the local model when none is configured, with its own defaults', () => {
    const cfg = loadConfig({});
    expect(cfg.LLM_PROVIDER).toBe('local');
    expect(cfg.LLM_MODEL).toMatch(/browser-agent-service\/models\/qwen2\.5-coder-1\.5b-instruct\.gguf$/);
    expect(cfg.LLM_PRICES).toEqual({ '*': { input: 0, output: 0 } });
    expect(cfg.LLM_CONTEXT_TOKENS).toBe(8192 - 768);
    expect(cfg.LLM_TIMEOUT_MS).toBe(600_000);
    expect(loadConfig({ LLM_TIMEOUT_MS: '5000' }).LLM_TIMEOUT_MS).toBe(5000);
  });

  it('use a hosted provider once a base URL or a key is given', () => {
    expect(loadConfig({ LLM_API_KEY: 'k' })).toMatchObject({ LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_CONTEXT_TOKENS: 100_000, LLM_TIMEOUT_MS: 120_000 });
    expect(loadConfig({ LLM_BASE_URL: 'http://localhost:11434/v1', LLM_MODEL: 'qwen' })).toMatchObject({ LLM_PROVIDER: 'openai', LLM_MODEL: 'qwen' });
    expect(loadConfig({ LLM_PROVIDER: 'anthropic', LLM_API_KEY: 'k' })).toMatchObject({ LLM_PROVIDER: 'anthropic', LLM_MODEL: 'claude-sonnet-4-5' });
  });

  it('let the model role listen beyond loopback only with a key, and keep the key out of errors', () => {
    expect(() => loadConfig({ ROLE: 'model', MODEL_HOST: '0.0.0.0' })).toThrow(/MODEL_API_KEY: required when the model role listens beyond loopback/);
    expect(loadConfig({ ROLE: 'model', MODEL_HOST: '0.0.0.0', MODEL_API_KEY: 'k'.repeat(24) }).MODEL_API_KEY).toBe('k'.repeat(24));
    expect(loadConfig({ ROLE: 'model' }).MODEL_HOST).toBe('127.0.0.1');
    expect(loadConfig({ ROLE: 'model', MODEL_HOST: '::1' }).MODEL_API_KEY).toBeUndefined();
    expect(() => loadConfig({ MODEL_API_KEY: 'short-secret' })).toThrow(/MODEL_API_KEY.*a value of 12 characters, not shown/);
  });

  it('bound the local answer: the predictor, the thought and the actions of one answer', () => {
    expect(loadConfig({})).toMatchObject({ LLM_PREDICTOR: 'answer', LLM_MAX_ACTIONS: 4 });
    expect(() => loadConfig({ LLM_PREDICTOR: 'guess' })).toThrow(/LLM_PREDICTOR/);
  });
});
