import { highestSustained, levelPasses, percentile, perStep, summary, taskSteps } from '../../bench/capacity-figures';

describe('percentile', () => {
  it('is the smallest value with at least p% of the values at or below it', () => {
    const xs = Array.from({ length: 20 }, (_, i) => 20 - i); // 20 down to 1
    expect(percentile(xs, 50)).toBe(10);
    expect(percentile(xs, 95)).toBe(19);
    expect(percentile(xs, 100)).toBe(20);
    expect(percentile(xs, 0)).toBe(1);
  });

  it('is the one value of one, and null of none', () => {
    expect(percentile([412.345], 95)).toBe(412.3);
    expect(percentile([], 50)).toBeNull();
    expect(summary([])).toEqual({ p50: null, p95: null, n: 0 });
  });
});

describe('taskSteps', () => {
  it("splits the time between two model requests into the model's time and the service's share", () => {
    const calls = [
      { at: 1000, answeredAt: 2003 },
      { at: 2250, answeredAt: 3251 },
      { at: 3700, answeredAt: 4700 },
    ];
    expect(taskSteps(calls, 1000)).toEqual([
      { wallMs: 1250, modelMs: 1003, serviceMs: 247 },
      { wallMs: 1450, modelMs: 1001, serviceMs: 449 },
    ]);
  });

  it('adds up: each step is the model time plus the service share', () => {
    const steps = taskSteps([{ at: 0, answeredAt: 3000 }, { at: 3120, answeredAt: 6125 }, { at: 6300 }], 3000);
    for (const s of steps) expect(s.modelMs + s.serviceMs).toBe(s.wallMs);
  });

  it('counts a request without its answer time as answered after the delay', () => {
    expect(taskSteps([{ at: 0 }, { at: 1300 }], 1000)).toEqual([{ wallMs: 1300, modelMs: 1000, serviceMs: 300 }]);
  });

  it('has no step for a task of one request', () => {
    expect(taskSteps([{ at: 5, answeredAt: 1005 }], 1000)).toEqual([]);
  });
});

describe('the highest number of sessions sustained', () => {
  const level = (sessions: number, completed: number, serviceShareP95Ms: number | null) => ({ sessions, completed, serviceShareP95Ms });

  it('is the last level of the ramp whose tasks all completed with the share within the limit at p95', () => {
    expect(highestSustained([level(10, 10, 120), level(20, 20, 240), level(30, 30, 300), level(40, 40, 310)], 300)).toBe(30);
  });

  it('stops at a level where a task did not complete, however fast its steps', () => {
    expect(highestSustained([level(10, 10, 120), level(20, 19, 150), level(30, 30, 200)], 300)).toBe(10);
  });

  it('is 0 when the smallest level fails, and reads the levels in order of sessions', () => {
    expect(highestSustained([level(20, 20, 100), level(10, 10, 301)], 300)).toBe(0);
    expect(highestSustained([level(20, 20, 100), level(10, 10, 100)], 300)).toBe(20);
  });

  it('fails a level without steps measured', () => {
    expect(levelPasses(level(5, 5, null), 300)).toBe(false);
  });
});

describe('perStep', () => {
  it('divides the CPU of each part and of the whole stack by the steps', () => {
    expect(perStep({ 'service (Node)': 900, redis: 10 }, 40)).toEqual({ byPart: { 'service (Node)': 22.5, redis: 0.3 }, total: 22.8 });
    expect(perStep({ redis: 10 }, 0)).toBeNull();
  });
});
