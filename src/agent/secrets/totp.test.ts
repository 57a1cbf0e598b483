import { base32Bytes, totpCode } from './totp';
import { TaskSecrets } from './secrets';

const base32 = (ascii: string) => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const byte of Buffer.from(ascii)) bits += byte.toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i < bits.length; i += 5) out += alphabet[parseInt(bits.slice(i, i + 5).padEnd(5, '0'), 2)];
  return out;
};

describe('one-time codes (RFC 6238)', () => {
  // The test vectors of RFC 6238, appendix B.
  const sha1 = base32('12345678901234567890');
  const sha256 = base32('12345678901234567890123456789012');
  const sha512 = base32('1234567890123456789012345678901234567890123456789012345678901234');
  it.each([
    [59, sha1, 'SHA1', '94287082'],
    [1111111109, sha1, 'SHA1', '07081804'],
    [1234567890, sha1, 'SHA1', '89005924'],
    [20000000000, sha1, 'SHA1', '65353130'],
    [59, sha256, 'SHA256', '46119246'],
    [1111111111, sha256, 'SHA256', '67062674'],
    [59, sha512, 'SHA512', '90693936'],
    [2000000000, sha512, 'SHA512', '38618901'],
  ] as const)('at %i s with %s…/%s: %s', (seconds, totp, algorithm, code) => {
    expect(totpCode({ totp, digits: 8, algorithm }, seconds * 1000)).toBe(code);
  });

  it('defaults to 6 digits every 30 seconds, and reads seeds as authenticator apps show them', () => {
    expect(totpCode({ totp: sha1 }, 59_000)).toBe('287082');
    expect(totpCode({ totp: sha1 }, 30_000)).toBe(totpCode({ totp: sha1 }, 59_999));
    const spaced = sha1.toLowerCase().replace(/(.{4})/g, '$1 ').trim();
    expect(totpCode({ totp: spaced }, 59_000)).toBe('287082');
    expect(base32Bytes('not base32!')).toBeNull();
  });

  it('types the code valid at that moment for its placeholder, tells it to be masked, and masks the seed', () => {
    const told: string[] = [];
    const secrets = new TaskSecrets([{ match: 'all', fields: { otp: { totp: sha1 }, password: 'hunter2-long-value' } }], (_name, code) => told.push(code), () => 59_000);
    expect(secrets.catalogue()).toEqual([
      { name: 'otp', matches: ['all'], oneTimeCode: true },
      { name: 'password', matches: ['all'] },
    ]);
    expect(secrets.substitute('<secret>otp</secret>', 'https://example.com/')).toEqual({ ok: true, text: '287082', used: ['otp'] });
    expect(told).toEqual(['287082']);
    expect(secrets.mask(`seed ${sha1} here`)).toBe('seed <secret>otp</secret> here');
  });
});

describe('one-time codes in the vault', () => {
  it('masks a typed code in everything the session sends out afterwards', () => {
    const { SecretVault } = jest.requireActual('./vault') as typeof import('./vault');
    const vault = new SecretVault();
    vault.hold('s1', 't1', [{ match: 'all', fields: { otp: { totp: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' } } }]);
    const typed = vault.forTask('s1', 't1')!.substitute('<secret>otp</secret>', 'https://example.com/');
    expect(typed.ok).toBe(true);
    const code = typed.ok ? typed.text : '';
    expect(code).toMatch(/^\d{6}$/);
    expect(vault.mask('s1', `The page says your code ${code} was accepted`)).toBe('The page says your code <secret>otp</secret> was accepted');
    expect(vault.maskDeep('s1', { value: code })).toEqual({ value: '<secret>otp</secret>' });
  });
});
