import { AddressPolicy, parseAllowlist, refusalReason } from './address-policy';
import { privateAddressProblem, useSubmissionAllowlist } from './submitted-urls';

/** The host a browser or Node would connect to for a URL (the WHATWG parser canonicalises IPv4). */
const hostOf = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, '');

describe('refusalReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private address'],
    ['172.16.0.1', 'private address'],
    ['172.31.255.255', 'private address'],
    ['192.168.1.1', 'private address'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['169.254.169.254', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'unique local'],
    ['fc00::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private address'],
    ['64:ff9b::7f00:1', 'reserved'],
    ['2002:7f00:1::', 'reserved'],
  ])('refuses %s (%s)', (ip, words) => {
    expect(refusalReason(ip)).toContain(words);
  });

  it.each(['8.8.8.8', '93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700::1111'])('lets the public address %s through', (ip) => {
    expect(refusalReason(ip)).toBeNull();
  });

  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['http://[0:0:0:0:0:ffff:7f00:1]/', '::ffff:7f00:1'],
    ['http://0251.0376.0251.0376/', '169.254.169.254'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254'],
  ])('every encoding of a private address is refused: %s', (url, host) => {
    expect(hostOf(url)).toBe(host);
    expect(refusalReason(hostOf(url))).not.toBeNull();
  });
});

describe('the allowlist', () => {
  it('parses host, host:port, CIDR, CIDR:port and bracketed IPv6', () => {
    const entries = parseAllowlist(' 127.0.0.1:8080 , 10.0.0.0/8, internal.example, db.example:27017, 192.168.0.0/16:443, [::1]:9000, fd00::/8 ');
    expect(entries.map((e) => [e.raw, e.name ?? null, e.port ?? null])).toEqual([
      ['127.0.0.1:8080', null, 8080],
      ['10.0.0.0/8', null, null],
      ['internal.example', 'internal.example', null],
      ['db.example:27017', 'db.example', 27017],
      ['192.168.0.0/16:443', null, 443],
      ['[::1]:9000', null, 9000],
      ['fd00::/8', null, null],
    ]);
  });

  it.each(['10.0.0.0/33', 'host:port', 'a b', '127.0.0.1:0', '127.0.0.1:70000', 'http://x'])('refuses the bad entry %s with its text', (bad) => {
    expect(() => parseAllowlist(bad)).toThrow(bad);
  });

  it('opens exactly what it names', () => {
    const policy = new AddressPolicy(parseAllowlist('127.0.0.1:8080,10.0.0.0/8,192.168.0.0/16:443,[::1]:9000'));
    expect(policy.check('127.0.0.1', 8080)).toBeNull();
    expect(policy.check('127.0.0.1', 8081)).toContain('loopback');
    expect(policy.check('127.0.0.2', 8080)).toContain('loopback');
    expect(policy.check('10.200.3.4', 5432)).toBeNull();
    expect(policy.check('192.168.4.5', 443)).toBeNull();
    expect(policy.check('192.168.4.5', 80)).toContain('private');
    expect(policy.check('::1', 9000)).toBeNull();
    expect(policy.check('::ffff:127.0.0.1', 8080)).toBeNull();
    expect(policy.check('169.254.169.254', 80)).toContain('link-local');
  });

  it('names are matched before resolution, with their port', () => {
    const policy = new AddressPolicy(parseAllowlist('internal.example:8443'));
    expect(policy.allowsName('INTERNAL.example', 8443)).toBe(true);
    expect(policy.allowsName('internal.example', 443)).toBe(false);
    expect(policy.allowsName('other.example', 8443)).toBe(false);
  });

  it("refuses the machine's own public addresses", () => {
    const policy = new AddressPolicy([], new Set(['93.184.216.34']));
    expect(policy.check('93.184.216.34', 80)).toContain('the service itself');
  });
});

describe('submitted URLs', () => {
  afterEach(() => useSubmissionAllowlist(''));

  it('refuses private literals in any encoding, lets names and public addresses through', () => {
    expect(privateAddressProblem('http://127.0.0.1:8233/namespaces/x')).toContain('127.0.0.1 is a private address (loopback)');
    expect(privateAddressProblem('http://2130706433/')).toContain('127.0.0.1');
    expect(privateAddressProblem('http://[::ffff:127.0.0.1]/')).toContain('loopback');
    expect(privateAddressProblem('http://169.254.169.254/latest/meta-data')).toContain('link-local');
    expect(privateAddressProblem('https://example.com/')).toBeNull();
    expect(privateAddressProblem('http://8.8.8.8/')).toBeNull();
  });

  it('follows the allowlist', () => {
    useSubmissionAllowlist('127.0.0.1:8080');
    expect(privateAddressProblem('http://127.0.0.1:8080/page')).toBeNull();
    expect(privateAddressProblem('http://127.0.0.1:8081/page')).not.toBeNull();
  });
});
