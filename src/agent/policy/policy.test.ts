import { ibanValid, luhnValid, compileDetector, customPatternProblem } from '../../contracts/detectors';
import { hostMatches, parseHostPattern, urlHost } from '../../contracts/host-patterns';
import { CompiledPolicy, type ActionFacts } from './policy';
import type { PolicyDocument } from '../../contracts/policy-rules';
import { MAX_MATCHED_URL, urlPatternMatches } from '../../contracts/url-patterns';

const policy = (over: Partial<PolicyDocument> = {}) =>
  new CompiledPolicy({ _id: 'pol_1', name: 'Careful', domainRules: { mode: 'allow_all', domains: [] }, rules: [], ...over });
const facts = (over: Partial<ActionFacts> = {}): ActionFacts => ({ action: 'click_element', pageUrl: 'https://shop.example.com/cart', texts: [], data: [], ...over });

describe('host patterns', () => {
  it('parses hosts, wildcards and ports, and says what is wrong otherwise', () => {
    expect(parseHostPattern('Example.COM')).toEqual({ host: 'example.com', wildcard: false });
    expect(parseHostPattern('*.example.com:8443')).toEqual({ host: 'example.com', wildcard: true, port: '8443' });
    expect(parseHostPattern('127.0.0.1')).toEqual({ host: '127.0.0.1', wildcard: false });
    expect(parseHostPattern('https://example.com')).toMatch(/no scheme/);
    expect(parseHostPattern('example.com/path')).toMatch(/no scheme, path/);
    expect(parseHostPattern('ex*ample.com')).toMatch(/only as a leading/);
    expect(parseHostPattern('example.com:99999')).toMatch(/port/);
    expect(parseHostPattern('')).toMatch(/empty/);
  });

  it('matches the host exactly, a wildcard also the domain itself, a port only that port', () => {
    const at = (u: string) => urlHost(u)!;
    const exact = parseHostPattern('example.com') as never;
    const wild = parseHostPattern('*.example.com') as never;
    const port = parseHostPattern('127.0.0.1:8080') as never;
    expect(hostMatches(exact, at('https://example.com/x'))).toBe(true);
    expect(hostMatches(exact, at('https://www.example.com/x'))).toBe(false);
    expect(hostMatches(wild, at('https://a.b.example.com/'))).toBe(true);
    expect(hostMatches(wild, at('https://example.com/'))).toBe(true);
    expect(hostMatches(wild, at('https://badexample.com/'))).toBe(false);
    expect(hostMatches(port, at('http://127.0.0.1:8080/'))).toBe(true);
    expect(hostMatches(port, at('http://127.0.0.1:8081/'))).toBe(false);
    expect(urlHost('about:blank')).toBeNull();
  });
});

describe('url patterns', () => {
  it('matches globs on the whole URL and plain text anywhere, ignoring case', () => {
    expect(urlPatternMatches('*/checkout*', 'https://shop.example.com/checkout/pay')).toBe(true);
    expect(urlPatternMatches('https://shop.example.com/*', 'https://other.example.com/')).toBe(false);
    expect(urlPatternMatches('/ADMIN', 'https://x.com/admin/users')).toBe(true);
    expect(urlPatternMatches('*a*b*c', 'xxaxxbxxc')).toBe(true);
    expect(urlPatternMatches('*a*b*c', 'xxaxxcxxb')).toBe(false);
  });

  it('agrees with a whole-URL glob on every small case', () => {
    // Reference: the pattern as an anchored regular expression (fine for these tiny inputs).
    const reference = (p: string, u: string) =>
      p.includes('*') ? new RegExp(`^${p.split('*').map((x) => x.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`, 's').test(u) : u.includes(p);
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    const word = (max: number, alphabet: string) => Array.from({ length: next(max + 1) }, () => alphabet[next(alphabet.length)]).join('');
    for (let i = 0; i < 5000; i++) {
      const pattern = word(7, 'ab*/');
      const url = word(10, 'ab/');
      expect([pattern, url, urlPatternMatches(pattern, url)]).toEqual([pattern, url, reference(pattern, url)]);
    }
    expect(urlPatternMatches('a*a', 'a')).toBe(false);
    expect(urlPatternMatches('ab*bc', 'abc')).toBe(false);
    expect(urlPatternMatches('ab*bc', 'abbc')).toBe(true);
    expect(urlPatternMatches('*', '')).toBe(true);
  });

  it('stays fast on patterns that make backtracking engines explode', () => {
    const t0 = performance.now();
    expect(urlPatternMatches(`${'*a'.repeat(200)}b`, 'a'.repeat(2000))).toBe(false);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});

describe('url patterns on an address a page made huge', () => {
  const rules = (effect: 'block' | 'approve' | 'allow') => [{ effect, urlPatterns: [`*${'a'.repeat(498)}b`, '*/never-here*'] }];
  const facts = (pageUrl: string): ActionFacts => ({ action: 'click_element', pageUrl, texts: [], data: [] });
  const huge = `https://site.example/${'#'}${'a'.repeat(2_000_000)}`;

  it('are not read past their limit: a rule that restricts takes such a URL as matching, and says why', () => {
    for (const effect of ['block', 'approve'] as const) {
      const decision = policy({ rules: rules(effect) }).evaluate(facts(huge));
      expect(decision.effect).toBe(effect);
      expect(decision.reason).toContain(`too long to check against its patterns (${huge.length} characters, at most ${MAX_MATCHED_URL})`);
    }
    expect(policy({ rules: rules('allow') }).evaluate(facts(huge))).toEqual({ effect: 'allow', reason: '' });
  });

  it('are read whole up to the limit', () => {
    const long = `https://site.example/${'a'.repeat(MAX_MATCHED_URL - 40)}b`;
    expect(long.length).toBeLessThanOrEqual(MAX_MATCHED_URL);
    expect(policy({ rules: rules('block') }).evaluate(facts(long)).effect).toBe('block');
    expect(policy({ rules: rules('block') }).evaluate(facts(`${long}c`)).effect).toBe('allow');
  });
});

describe('sensitive data detectors', () => {
  const finds = (name: string, text: string) => compileDetector(name as never).find(text);

  it('finds Luhn-valid card numbers only', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(finds('card_number', 'pay with 4111 1111 1111 1111 today')).toBe(true);
    expect(finds('card_number', '4111-1111-1111-1111')).toBe(true);
    expect(finds('card_number', 'order 4111 1111 1111 1112')).toBe(false);
    expect(finds('card_number', 'call 0612345678')).toBe(false);
  });

  it('finds IBANs whose checksum holds', () => {
    expect(ibanValid('DE89 3704 0044 0532 0130 00')).toBe(true);
    expect(ibanValid('DE89 3704 0044 0532 0130 01')).toBe(false);
    expect(finds('iban', 'transfer to GB82 WEST 1234 5698 7654 32 please')).toBe(true);
    expect(finds('iban', 'transfer to GB82 WEST 1234 5698 7654 33 please')).toBe(false);
  });

  it('finds e-mail addresses, phone numbers and API keys', () => {
    expect(finds('email', 'write to ada.l+x@mail.example.org')).toBe(true);
    expect(finds('email', 'not an address: ada@localhost')).toBe(false);
    expect(finds('phone', 'call +33 6 12 34 56 78')).toBe(true);
    expect(finds('phone', 'call (555) 123-4567')).toBe(true);
    expect(finds('phone', 'on 2026-11-23 at 10:00')).toBe(false);
    expect(finds('phone', 'order 12345')).toBe(false);
    expect(finds('api_key', 'key sk-proj-abcdefghijklmnopqrstuvwx1234')).toBe(true);
    expect(finds('api_key', 'AKIAIOSFODNN7EXAMPLE')).toBe(true);
    expect(finds('api_key', 'a plain sentence without keys')).toBe(false);
  });

  it('runs named custom patterns on RE2 and refuses what RE2 cannot run', () => {
    const d = compileDetector({ name: 'employee_id', pattern: '(?i)emp-\\d{6}' });
    expect(d.find('id EMP-123456')).toBe(true);
    expect(d.label).toBe('data matching "employee_id"');
    expect(customPatternProblem('(a+)+$')).toBeNull();
    expect(customPatternProblem('(a)\\1')).toMatch(/not a valid RE2/);
    expect(customPatternProblem('(?<=a)b')).toMatch(/not a valid RE2/);
    expect(customPatternProblem('a'.repeat(501))).toMatch(/at most 500/);
    // the classic catastrophic pattern on a long input: linear on RE2
    const t0 = performance.now();
    expect(compileDetector({ name: 'x', pattern: '(a+)+$' }).find(`${'a'.repeat(10_000)}!`)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});

describe('policy decisions', () => {
  it('allows what no rule covers', () => {
    expect(policy().evaluate(facts()).effect).toBe('allow');
    expect(policy({ rules: [{ effect: 'block', actionTypes: ['navigate'] }] }).evaluate(facts()).effect).toBe('allow');
  });

  it('needs every condition a rule gives, and any one value of each', () => {
    const p = policy({ rules: [{ effect: 'block', actionTypes: ['click_element', 'send_keys'], keywords: ['Delete', 'remove'], urlPatterns: ['*/account*'] }] });
    expect(p.evaluate(facts({ pageUrl: 'https://x.com/account', texts: ['button "Delete account"'] }))).toEqual({
      effect: 'block',
      rule: 1,
      reason: 'rule 1 of the policy "Careful" (block) applies: the action is click_element, it mentions "delete", the URL matches "*/account*"',
    });
    expect(p.evaluate(facts({ pageUrl: 'https://x.com/cart', texts: ['Delete'] })).effect).toBe('allow');
    expect(p.evaluate(facts({ pageUrl: 'https://x.com/account', texts: ['Save'] })).effect).toBe('allow');
    expect(p.evaluate(facts({ action: 'input_text', pageUrl: 'https://x.com/account', texts: ['Delete'] })).effect).toBe('allow');
  });

  it('decides block over approve over allow, whatever the order of the rules', () => {
    const rules = [
      { effect: 'allow' as const, actionTypes: ['click_element'] },
      { effect: 'approve' as const, keywords: ['pay'] },
      { effect: 'block' as const, keywords: ['pay now'] },
    ];
    const p = policy({ rules });
    expect(p.evaluate(facts({ texts: ['Pay later'] }))).toMatchObject({ effect: 'approve', rule: 2 });
    expect(p.evaluate(facts({ texts: ['Pay now'] }))).toMatchObject({ effect: 'block', rule: 3 });
    expect(policy({ rules: [...rules].reverse() }).evaluate(facts({ texts: ['Pay now'] }))).toMatchObject({ effect: 'block', rule: 1 });
    expect(p.evaluate(facts({ texts: ['Next'] }))).toMatchObject({ effect: 'allow', rule: 1 });
  });

  it('catches sensitive data in what the action types or submits, not in what it clicks', () => {
    const p = policy({ rules: [{ effect: 'block', sensitiveData: ['card_number', { name: 'ticket', pattern: 'TCK-\\d+' }] }] });
    expect(p.evaluate(facts({ action: 'input_text', data: ['4111 1111 1111 1111'] })).reason).toContain('contains a card number');
    expect(p.evaluate(facts({ action: 'input_text', data: ['see TCK-42'] })).reason).toContain('data matching "ticket"');
    expect(p.evaluate(facts({ texts: ['4111 1111 1111 1111'] })).effect).toBe('allow');
  });

  it('keeps the browser within its domains: allowlist and blocklist', () => {
    const allow = policy({ domainRules: { mode: 'allowlist', domains: ['*.example.com'] } });
    expect(allow.checkUrl('https://www.example.com/a').effect).toBe('allow');
    expect(allow.checkUrl('https://evil.test/').reason).toBe('evil.test is not among the domains the policy "Careful" allows (*.example.com)');
    expect(allow.checkUrl('about:blank').effect).toBe('allow');
    expect(allow.evaluate(facts({ action: 'navigate', targetUrl: 'https://evil.test/' })).effect).toBe('block');
    const block = policy({ domainRules: { mode: 'blocklist', domains: ['evil.test'] } });
    expect(block.checkUrl('https://evil.test/x').reason).toBe('evil.test is blocked by the policy "Careful" (evil.test)');
    expect(block.checkUrl('https://sub.evil.test/x').effect).toBe('allow');
    expect(block.needsPageFacts('click_element')).toBe(true);
    expect(block.needsPageFacts('input_text')).toBe(false);
    expect(policy().needsPageFacts('click_element')).toBe(false);
    const keywords = policy({ rules: [{ effect: 'block', actionTypes: ['click_element'], keywords: ['x'] }] });
    expect(keywords.needsPageFacts('click_element')).toBe(true);
    expect(keywords.needsPageFacts('scroll')).toBe(false);
  });

  it('decides 20 rules in well under a millisecond', () => {
    const rules = Array.from({ length: 20 }, (_, i) => ({ effect: 'approve' as const, actionTypes: ['input_text'], keywords: [`word${i}`], sensitiveData: ['card_number' as const, 'iban' as const, 'email' as const] }));
    const p = policy({ rules, domainRules: { mode: 'allowlist', domains: ['*.example.com', 'example.org'] } });
    const f = facts({ action: 'input_text', texts: ['textbox "Message"'], data: ['Hello, this is an ordinary message of some length without anything in it.'] });
    for (let i = 0; i < 50; i++) p.evaluate(f);
    const times: number[] = [];
    for (let i = 0; i < 500; i++) {
      const t0 = performance.now();
      p.evaluate(f);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    process.stdout.write(`policy of 20 rules, evaluate p50 ${times[250].toFixed(3)} ms, p95 ${times[475].toFixed(3)} ms\n`);
    expect(p.evaluate(f).effect).toBe('allow');
  });
});
