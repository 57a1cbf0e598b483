import { CpuGauge } from './cpu-gauge';

describe('CpuGauge', () => {
  const gauge = (load = 0) => {
    const clock = { busy: 0, total: 0, now: 0 };
    const g = new CpuGauge({ busyLimit: 0.9, loadPerCore: 1.2, cores: 2, windowSamples: 3, everyMs: 3_600_000, now: () => clock.now, times: () => ({ busy: clock.busy, total: clock.total }), loadavg: () => load });
    /** One second of the machine at `share` busy. */
    const second = (share: number) => {
      clock.total += 2000;
      clock.busy += 2000 * share;
      clock.now += 1000;
      g.sample();
    };
    return { g, second };
  };

  it('is short when the cores were busier than the limit over the last seconds, and lets go when the burst ends', () => {
    const { g, second } = gauge();
    expect(g.short()).toBe(false); // one sample: nothing to tell yet
    second(0.95);
    second(0.97);
    expect(g.short()).toBe(true);
    second(0.2);
    expect(g.busyFraction()).toBeCloseTo((0.95 + 0.97 + 0.2) / 3);
    expect(g.short()).toBe(false);
    second(0.95);
    second(0.95);
    second(0.95);
    expect(g.short()).toBe(true);
    g.stop();
  });

  it('is short when the load of the last minute is above its limit per core, however idle the last seconds', () => {
    const { g, second } = gauge(2.5);
    second(0.1);
    expect(g.short()).toBe(true);
    g.stop();
  });

  it('stops sampling when nobody asked for a minute', () => {
    const { g, second } = gauge();
    g.short();
    second(0.5);
    expect(g.busyFraction()).toBe(0.5);
    for (let i = 0; i < 61; i++) second(0.5);
    expect(g.busyFraction()).toBeUndefined();
  });
});
