import { maskUrl } from './artifacts';

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
