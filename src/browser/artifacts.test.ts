import pino from 'pino';
import type { Request } from 'playwright-core';
import { MAX_CAPTURED_URL, SessionArtifacts, captureUrl, maskUrl } from './artifacts';

describe('maskUrl', () => {
  it('masks credentials and secret-looking query values, keeps the rest', () => {
    expect(maskUrl('https://user:pw@example.com/a?token=abc&q=1')).toBe('https://***:***@example.com/a?token=***&q=1');
    expect(maskUrl('https://example.com/cb?code=123&state=x&access_token=t&X-Amz-Signature=s')).toBe(
      'https://example.com/cb?code=***&state=x&access_token=***&X-Amz-Signature=***',
    );
    expect(maskUrl('https://example.com/?page=2')).toBe('https://example.com/?page=2');
    expect(maskUrl('not a url')).toBe('not a url');
  });
});

describe('captureUrl', () => {
  it('keeps short URLs as maskUrl gives them', () => {
    expect(captureUrl('https://example.com/a?token=abc&q=1')).toBe('https://example.com/a?token=***&q=1');
  });

  it('cuts a long URL to MAX_CAPTURED_URL characters with a marker, secrets in the kept part masked', () => {
    const raw = `https://example.com/search?api_key=SECRET123&q=${'x'.repeat(50_000)}&token=LATE`;
    const kept = captureUrl(raw);
    expect(kept.length).toBeLessThanOrEqual(MAX_CAPTURED_URL);
    expect(kept.startsWith('https://example.com/search?api_key=***&q=xxx')).toBe(true);
    expect(kept.endsWith(`…[cut, ${raw.length} characters in all]`)).toBe(true);
    expect(kept).not.toContain('SECRET123');
    expect(kept).not.toContain('LATE');
  });

  it('bounds data: URLs of megabytes', () => {
    const raw = `data:image/png;base64,${'A'.repeat(3_000_000)}`;
    const kept = captureUrl(raw);
    expect(kept.length).toBeLessThanOrEqual(MAX_CAPTURED_URL);
    expect(kept.startsWith('data:image/png;base64,AAAA')).toBe(true);
  });

  it('bounds a URL that masking makes longer', () => {
    const raw = `https://example.com/?q=${'é'.repeat(1000)}`;
    expect(raw.length).toBeLessThan(MAX_CAPTURED_URL);
    const kept = captureUrl(raw);
    expect(kept.length).toBeLessThanOrEqual(MAX_CAPTURED_URL);
    expect(kept).toContain('characters in all]');
  });
});

describe('SessionArtifacts', () => {
  it('gives back what it handed out when storing it failed, ahead of what came since', async () => {
    const artifacts = new SessionArtifacts('s1', { maxRequests: 10, logger: pino({ level: 'silent' }) });
    const request = (url: string) => ({ url: () => url }) as unknown as Request;
    artifacts.taskId = 't1';
    artifacts.onRequest(request('https://example.com/a'));
    const taken = await artifacts.collect('t1');
    expect(taken.network.map((n) => n.url)).toEqual(['https://example.com/a']);
    artifacts.restore('t1', taken);
    artifacts.onRequest(request('https://example.com/b'));
    expect((await artifacts.collect('t1')).network.map((n) => n.url)).toEqual(['https://example.com/a', 'https://example.com/b']);
    expect((await artifacts.collect('t1')).network).toEqual([]);
  });
});
