import { countedFrom } from './rate-limit';

describe('rate limit answer', () => {
  const now = 1_700_000_000_000;

  it('allows up to the limit and counts down what remains', () => {
    expect(countedFrom({ consumedPoints: 1, msBeforeNext: 60_000 }, 10, now)).toEqual({ allowed: true, remaining: 9, resetAt: now + 60_000, retryAfterS: 60 });
    expect(countedFrom({ consumedPoints: 10, msBeforeNext: 1_500 }, 10, now)).toEqual({ allowed: true, remaining: 0, resetAt: now + 1_500, retryAfterS: 2 });
  });

  it('refuses past the limit, saying when the oldest request leaves the window', () => {
    expect(countedFrom({ consumedPoints: 11, msBeforeNext: 12_345 }, 10, now)).toEqual({ allowed: false, remaining: 0, resetAt: now + 12_345, retryAfterS: 13 });
  });

  it('asks to wait at least a second', () => {
    expect(countedFrom({ consumedPoints: 12, msBeforeNext: 0 }, 10, now).retryAfterS).toBe(1);
  });
});
