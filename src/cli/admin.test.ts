import { parseCommand, parseDuration } from './admin';

describe('admin CLI flags', () => {
  it('parses a command and its flags, in either --flag value or --flag=value form', () => {
    expect(parseCommand(['keys', 'create', '--user', 'usr_1', '--expires-in=30d'])).toEqual({ command: 'keys create', flags: { user: 'usr_1', 'expires-in': '30d' } });
    expect(parseCommand(['users', 'topup', '--user', 'u', '--amount=-5']).flags).toEqual({ user: 'u', amount: '-5' });
    expect(parseCommand(['users', 'topup', '--user', 'u', '--amount', '-5']).flags).toEqual({ user: 'u', amount: '-5' });
    expect(parseCommand(['users', 'list'])).toEqual({ command: 'users list', flags: {} });
  });

  it.each([
    [['users', 'create', '--email'], /argument missing/],
    [['users', 'create', '--nope', 'x'], /Unknown option '--nope'/],
    [['keys', 'revoke', '--user', 'u'], /keys revoke does not take --user/],
    [['keys', 'frobnicate'], /unknown command "keys frobnicate"/],
    [['users', 'list', 'extra'], /unexpected argument: extra/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCommand(argv)).toThrow(message);
  });

  it('reads durations in seconds to weeks', () => {
    expect(parseDuration('30d')).toBe(30 * 86_400_000);
    expect(parseDuration('12h')).toBe(12 * 3_600_000);
    expect(parseDuration('90m')).toBe(90 * 60_000);
    expect(parseDuration('1s')).toBe(1000);
    expect(parseDuration('2w')).toBe(14 * 86_400_000);
    for (const bad of ['0d', '30', 'd', '1.5h', '-1d', '3y']) expect(() => parseDuration(bad)).toThrow(/positive duration/);
  });
});
