import { Writable } from 'node:stream';
import { createLogger, redactUrls } from './logger';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('debug', stream), text: () => lines.join('') };
}

describe('URLs in logs', () => {
  it.each([
    ['https://app.example.com/reset?token=abc123&u=1', 'https://app.example.com/reset'],
    ['http://user:s3cret@host:8080/a/b#frag', 'http://host:8080/a/b'],
    ['went to https://x.test/p?code=abc123 then https://y.test/?t=1', 'went to https://x.test/p then https://y.test/'],
    ['mongodb://app:s3cret@db:27017/x?authSource=admin', 'mongodb://db:27017/x'],
    ['no url here ?token=x', 'no url here ?token=x'],
  ])('%s → %s', (input, output) => {
    expect(redactUrls(input)).toBe(output);
  });

  it('logs origin and path only, in fields, nested fields, messages and errors', () => {
    const { logger, text } = capture();
    logger.info({ url: 'https://bank.example/login?session=abc123', nested: { target: 'https://x.example/dl?sig=abc123' } }, 'navigated to https://bank.example/next?code=abc123');
    logger.warn({ err: new Error('page.goto: net::ERR_FAILED at https://bank.example/p?token=abc123') }, 'step failed');
    const out = text();
    expect(out).not.toContain('abc123');
    expect(out).toContain('"url":"https://bank.example/login"');
    expect(out).toContain('"target":"https://x.example/dl"');
    expect(out).toContain('"msg":"navigated to https://bank.example/next"');
    expect(out).toContain('net::ERR_FAILED at https://bank.example/p');
  });
});
