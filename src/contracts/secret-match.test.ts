import { originOf, parseSecretMatch, sameSite, secretMatchCovers, type SecretMatch } from './secret-match';

const match = (raw: string): SecretMatch => {
  const parsed = parseSecretMatch(raw);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
};
const covers = (raw: string, url: string): boolean => secretMatchCovers(match(raw), originOf(url)!);

describe('a secret match', () => {
  it('without a scheme or port is https on its default port (plain http only on loopback)', () => {
    expect(covers('bank.com', 'https://bank.com/login')).toBe(true);
    expect(covers('bank.com', 'https://bank.com:443/login')).toBe(true);
    expect(covers('bank.com', 'http://bank.com:8081/')).toBe(false);
    expect(covers('bank.com', 'https://bank.com:8443/')).toBe(false);
    expect(covers('bank.com', 'http://bank.com/')).toBe(false);
    expect(covers('bank.com', 'https://www.bank.com/')).toBe(false);
    expect(covers('*.bank.com', 'https://www.bank.com/')).toBe(true);
    expect(covers('localhost', 'http://localhost/')).toBe(true);
    expect(covers('127.0.0.1', 'http://127.0.0.1/')).toBe(true);
    expect(covers('127.0.0.1', 'http://127.0.0.1:8080/')).toBe(false);
  });

  it('honours the scheme and port it names', () => {
    expect(covers('bank.com:8081', 'http://bank.com:8081/')).toBe(false);
    expect(covers('bank.com:8081', 'https://bank.com:8081/')).toBe(true);
    expect(covers('http://bank.com:8081', 'http://bank.com:8081/')).toBe(true);
    expect(covers('http://bank.com:8081', 'https://bank.com:8081/')).toBe(false);
    expect(covers('http://bank.com', 'http://bank.com/')).toBe(true);
    expect(covers('http://bank.com', 'http://bank.com:8081/')).toBe(false);
    expect(covers('HTTPS://Bank.com/', 'https://bank.com/')).toBe(true);
    expect(covers('https://bank.com', 'http://bank.com/')).toBe(false);
    expect(covers('127.0.0.1:8080', 'http://127.0.0.1:8080/')).toBe(true);
  });

  it('refuses other schemes, paths and bad hosts with a message', () => {
    expect(parseSecretMatch('ftp://bank.com')).toBe('may name only http:// or https:// as its scheme');
    expect(parseSecretMatch('https://bank.com/login')).toContain('no path or spaces');
    expect(parseSecretMatch('bank.com/login')).toContain('no path or spaces');
    expect(parseSecretMatch('https://')).toBe('must not be empty');
    expect(parseSecretMatch(`https://${'a'.repeat(300)}.com`)).toContain('at most');
    expect(match('https://*.bank.com:8443')).toEqual({ host: 'bank.com', wildcard: true, port: '8443', scheme: 'https' });
  });
});

describe('same site', () => {
  const site = (a: string, b: string) => sameSite(originOf(a)!, originOf(b)!);
  it('reads the public suffix list, its private part too', () => {
    expect(site('https://attacker.github.io/', 'https://victim.github.io/')).toBe(false);
    expect(site('https://login.bank.com/', 'https://www.bank.com/')).toBe(true);
    expect(site('https://a.example.co.uk/', 'https://b.example.co.uk/')).toBe(true);
    expect(site('https://example.co.uk/', 'https://other.co.uk/')).toBe(false);
    expect(site('https://a.herokuapp.com/', 'https://b.herokuapp.com/')).toBe(false);
  });
  it('is schemeful, and an address is a site by itself', () => {
    expect(site('http://bank.com/', 'https://bank.com/')).toBe(false);
    expect(site('http://127.0.0.1:1/', 'http://127.0.0.1:2/')).toBe(true);
    expect(site('http://127.0.0.1/', 'http://127.0.0.2/')).toBe(false);
  });
});
