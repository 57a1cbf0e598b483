import { SecretVault } from './vault';
import { TaskSecrets } from './secrets';
import type { SessionMasks } from '../../store/masks.repository';

const secrets = new TaskSecrets([
  { match: '*.example.com', fields: { email: 'Ada@Example.com', password: 'p@ss w0rd&"x' } },
  { match: 'login.other.test', fields: { password: 'other-pass' } },
  { match: 'all', fields: { pin: '42' } },
]);

describe('secret substitution', () => {
  it('puts the value in on a page its match covers, the most specific entry first', () => {
    expect(secrets.substitute('<secret>password</secret>', 'https://www.example.com/login')).toEqual({ ok: true, text: 'p@ss w0rd&"x', used: ['password'] });
    expect(secrets.substitute('<secret>password</secret>', 'https://login.other.test/')).toEqual({ ok: true, text: 'other-pass', used: ['password'] });
    expect(secrets.substitute('me: <secret>email</secret>!', 'https://example.com/')).toMatchObject({ ok: true, text: 'me: Ada@Example.com!' });
    expect(secrets.substitute('<secret>pin</secret>', 'http://127.0.0.1:8080/')).toMatchObject({ ok: true, text: '42' });
  });

  it('refuses a page the match does not cover, and unknown names, typing nothing', () => {
    expect(secrets.substitute('<secret>email</secret>', 'https://evil.test/')).toEqual({
      ok: false,
      error: 'The secret "email" may only be used on *.example.com, and this page is evil.test. Nothing was typed.',
    });
    expect(secrets.substitute('<secret>email</secret>', 'about:blank')).toMatchObject({ ok: false });
    expect(secrets.substitute('<secret>token</secret>', 'https://example.com/')).toEqual({
      ok: false,
      error: 'There is no secret named "token"; the secrets are: email, password, pin. Nothing was typed.',
    });
    expect(secrets.substitute('plain text', 'https://evil.test/')).toEqual({ ok: true, text: 'plain text', used: [] });
  });

  it('is as strict as the match reads: the scheme and port, and the site of the frames above by the public suffix list', () => {
    const strict = new TaskSecrets([{ match: 'victim.github.io', fields: { password: 'gh-pages-pass' } }, { match: 'http://intranet.test:8080', fields: { token: 'intra-token' } }]);
    expect(strict.substitute('<secret>password</secret>', 'https://victim.github.io/login')).toMatchObject({ ok: true });
    expect(strict.substitute('<secret>password</secret>', 'http://victim.github.io:8081/login')).toEqual({
      ok: false,
      error:
        'The secret "password" may only be used on victim.github.io, and this page is http://victim.github.io:8081. A match without a scheme is for https only (and http on this machine\'s own addresses), and without a port for the scheme\'s default port: "http://victim.github.io:8081" would allow this page. Nothing was typed.',
    });
    expect(strict.substitute('<secret>password</secret>', 'https://victim.github.io/login', ['https://attacker.github.io/'])).toEqual({
      ok: false,
      error: 'The secret "password" may only be used on victim.github.io: this field is on victim.github.io, but in a frame embedded by attacker.github.io, another site the secret does not name. Nothing was typed.',
    });
    expect(strict.substitute('<secret>password</secret>', 'https://victim.github.io/login', ['https://victim.github.io/outer'])).toMatchObject({ ok: true });
    expect(strict.substitute('<secret>token</secret>', 'http://intranet.test:8080/')).toMatchObject({ ok: true, text: 'intra-token' });
    expect(strict.substitute('<secret>token</secret>', 'https://intranet.test:8080/')).toMatchObject({ ok: false });
  });

  it('lists names and where they work, never values', () => {
    const listed = JSON.stringify(secrets.catalogue());
    expect(secrets.catalogue()).toEqual([
      { name: 'email', matches: ['*.example.com'] },
      { name: 'password', matches: ['*.example.com', 'login.other.test'] },
      { name: 'pin', matches: ['all'] },
    ]);
    expect(listed).not.toContain('w0rd');
  });
});

describe('masking', () => {
  it('replaces values in any case and in URL, form, JSON and HTML encodings', () => {
    expect(secrets.mask('Welcome ada@example.com')).toBe('Welcome <secret>email</secret>');
    expect(secrets.mask('https://x.test/?u=Ada%40Example.com&p=p%40ss%20w0rd%26%22x')).toBe('https://x.test/?u=<secret>email</secret>&p=<secret>password</secret>');
    expect(secrets.mask('p=p%40ss+w0rd%26%22x')).toBe('p=<secret>password</secret>');
    expect(secrets.mask(JSON.stringify({ typed: 'p@ss w0rd&"x' }))).toBe('{"typed":"<secret>password</secret>"}');
    expect(secrets.mask('value="p@ss w0rd&amp;&quot;x"')).toBe('value="<secret>password</secret>"');
  });

  it('masks short values only where they stand alone', () => {
    expect(secrets.mask('PIN 42, order 4242, room 42b')).toBe('PIN <secret>pin</secret>, order 4242, room 42b');
  });

  it('masks deep values and leaves text without values alone', () => {
    expect(secrets.maskDeep({ a: ['other-pass'], n: 1 })).toEqual({ a: ['<secret>password</secret>'], n: 1 });
    expect(secrets.mask('nothing here')).toBe('nothing here');
  });
});

describe('the vault', () => {
  it('holds a task\'s secrets per session, masks every value the session was given, forgets on close', () => {
    const vault = new SecretVault();
    vault.hold('s1', 't1', [{ match: 'all', fields: { a: 'first-value' } }]);
    vault.hold('s1', 't2', [{ match: 'all', fields: { b: 'second-value' } }]);
    expect(vault.forTask('s1', 't1')).toBeUndefined();
    expect(vault.forTask('s1', 't2')!.catalogue()).toEqual([{ name: 'b', matches: ['all'] }]);
    expect(vault.mask('s1', 'first-value second-value')).toBe('<secret>a</secret> <secret>b</secret>');
    expect(vault.mask('s2', 'first-value')).toBe('first-value');
    vault.forget('s1');
    expect(vault.mask('s1', 'first-value')).toBe('first-value');
  });
});

describe('SecretVault.maskAlso', () => {
  it('masks what a person typed into a secret field from then on, without making it typeable', () => {
    const vault = new SecretVault();
    vault.hold('s1', 't1', [{ match: 'all', fields: { pw: 'given-secret-1' } }]);
    vault.maskAlso('s1', 'typed_by_hand', 'by-hand-secret-2');
    expect(vault.mask('s1', 'a given-secret-1 b by-hand-secret-2')).toBe('a <secret>pw</secret> b <secret>typed_by_hand</secret>');
    expect(vault.forTask('s1', 't1')!.substitute('<secret>typed_by_hand</secret>', 'https://a.test/')).toMatchObject({ ok: false });
    // The next task's secrets arrive: the value typed by hand stays masked.
    vault.hold('s1', 't2', []);
    expect(vault.mask('s1', 'by-hand-secret-2')).toBe('<secret>typed_by_hand</secret>');
    // A session without secrets of its own.
    vault.maskAlso('s2', 'typed_by_hand', 'only-by-hand-3');
    expect(vault.maskDeep('s2', { url: 'https://a.test/?p=only-by-hand-3' })).toEqual({ url: 'https://a.test/?p=<secret>typed_by_hand</secret>' });
    expect(vault.mask('s3', 'only-by-hand-3')).toBe('only-by-hand-3');
  });
});

describe('the masks of a session beyond one worker', () => {
  it('stores what a session masks as it changes and brings it back on another worker, mask-only', async () => {
    const stored = new Map<string, SessionMasks>();
    const store = { save: async (id: string, m: SessionMasks) => void stored.set(id, structuredClone(m)), get: async (id: string) => stored.get(id) ?? null };
    const first = new SecretVault(store);
    first.hold('s1', 't1', [{ match: 'all', fields: { key: 'earlier-task-key-1' } }]);
    first.maskAlso('s1', 'typed_by_hand', 'by-hand-secret-2');
    await first.flush('s1');
    first.forget('s1');
    // Another worker (or the same one after a hibernation) opens the session's browser again.
    const second = new SecretVault(store);
    expect(second.mask('s1', 'earlier-task-key-1')).toBe('earlier-task-key-1');
    await second.recall('s1');
    expect(second.mask('s1', 'a earlier-task-key-1 b by-hand-secret-2')).toBe('a <secret>key</secret> b <secret>typed_by_hand</secret>');
    // The next task's own secrets are typeable; the earlier ones stay masked only.
    second.hold('s1', 't2', [{ match: 'all', fields: { pin: 'next-task-pin-3' } }]);
    expect(second.forTask('s1', 't2')!.substitute('<secret>key</secret>', 'https://a.test/')).toMatchObject({ ok: false });
    expect(second.mask('s1', 'earlier-task-key-1 next-task-pin-3')).toBe('<secret>key</secret> <secret>pin</secret>');
    await second.flush('s1');
    expect(stored.get('s1')!.given.map((e) => Object.keys(e.fields)[0])).toEqual(['key', 'pin']);
    expect(stored.get('s1')!.masked).toEqual([{ match: 'all', fields: { typed_by_hand: 'by-hand-secret-2' } }]);
  });
});

describe('masking parts of long values', () => {
  const KEY = 'sk-live-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-end';
  const SPACED = 'correct  horse   battery staple';
  const s = new TaskSecrets([{ match: 'all', fields: { apiKey: KEY, phrase: SPACED, pin: '42' } }]);
  const none = (text: string, ...parts: string[]) => parts.every((p) => !text.toLowerCase().includes(p.toLowerCase()));

  it('masks every part of 8 or more characters, wherever it is cut', () => {
    for (const [from, to] of [[0, 59], [0, 8], [10, 18], [KEY.length - 8, KEY.length], [5, 40], [20, KEY.length]]) {
      const part = KEY.slice(from, to);
      const out = s.mask(`value="${part}…" here`);
      expect({ part, out }).toEqual({ part, out: 'value="<secret>apiKey</secret>…" here' });
    }
    // shorter than 8: not a part of the value any more
    expect(s.mask('sk-live and 0123456')).toBe('sk-live and 0123456');
  });

  it('masks the value with its whitespace removed, collapsed, doubled or split over lines', () => {
    expect(s.mask('typed: correct horse battery staple.')).toBe('typed: <secret>phrase</secret>.');
    expect(s.mask('typed: correcthorsebatterystaple.')).toBe('typed: <secret>phrase</secret>.');
    expect(s.mask(`typed: ${SPACED}.`)).toBe('typed: <secret>phrase</secret>.');
    expect(s.mask('typed: correct\n horse\tbattery  staple.')).toBe('typed: <secret>phrase</secret>.');
    expect(s.mask('value="correct horse batt…"')).toBe('value="<secret>phrase</secret>…"');
    const k = `${KEY.slice(0, 30)}  \n  ${KEY.slice(30)}`;
    expect(s.mask(k)).toBe('<secret>apiKey</secret>');
  });

  it('masks parts in URL, form, JSON and HTML encodings and in any letter case', () => {
    for (const form of [encodeURIComponent(SPACED), new URLSearchParams({ v: SPACED }).toString().slice(2), JSON.stringify(SPACED), SPACED.toUpperCase(), encodeURIComponent(SPACED).toLowerCase()]) {
      const out = s.mask(`https://x.test/?q=${form.slice(0, 20)}&z=1`);
      expect({ form, out }).toEqual({ form, out: expect.stringMatching(/^https:\/\/x\.test\/\?q="?<secret>phrase<\/secret>/) });
      expect(none(out, 'correct', 'horse%20')).toBe(true);
    }
    const url = `https://x.test/?c=${encodeURIComponent(KEY.slice(3, 50))}`;
    expect(s.mask(url)).toBe('https://x.test/?c=<secret>apiKey</secret>');
  });

  it('masks parts in base64 and base64url, at any alignment', () => {
    for (let cut = 0; cut < 6; cut++) {
      for (const prefix of ['', 'a', 'ab']) {
        const b64 = Buffer.from(`${prefix}${KEY.slice(cut, cut + 40)}`).toString('base64');
        const b64url = Buffer.from(`${prefix}${KEY.slice(cut, cut + 40)}`).toString('base64url');
        for (const enc of [b64, b64url]) {
          const out = s.mask(`Authorization: Basic ${enc}`);
          // at most a few characters at each end (that also carry the neighbouring bytes) are left
          expect({ enc, out }).toEqual({ enc, out: expect.stringMatching(/^Authorization: Basic .{0,4}<secret>apiKey<\/secret>.{0,4}$/) });
        }
      }
    }
  });

  it('leaves text without parts of a value, and placeholders, alone; short values stay whole-word', () => {
    expect(s.mask('nothing of the key here: sk-live')).toBe('nothing of the key here: sk-live');
    expect(s.mask('<secret>apiKey</secret> and <secret>phrase</secret>')).toBe('<secret>apiKey</secret> and <secret>phrase</secret>');
    expect(s.mask(s.mask(`a ${KEY} b`))).toBe('a <secret>apiKey</secret> b');
    expect(s.mask('PIN 42, order 4242')).toBe('PIN <secret>pin</secret>, order 4242');
  });

  it('masks parts through the vault and in deep values', () => {
    const vault = new SecretVault();
    vault.hold('s', 't', [{ match: 'all', fields: { apiKey: KEY } }]);
    expect(vault.maskDeep('s', { message: `the key starts ${KEY.slice(0, 59)}`, n: [KEY.slice(30, 45)] })).toEqual({ message: 'the key starts <secret>apiKey</secret>', n: ['<secret>apiKey</secret>'] });
  });
});
