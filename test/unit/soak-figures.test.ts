import { drift, kbPerTask, median, plainActions, recordComplete, sessionKind, settleFinal, slopePerMinute, tally, windowMedian, type MemorySample } from '../../bench/soak-figures';

const minute = 60_000;
/** A part's MB read every 15 s: `f(minutes)`. */
const series = (minutes: number, f: (m: number) => number): MemorySample[] =>
  Array.from({ length: minutes * 4 + 1 }, (_, i) => ({ at: i * 15_000, mb: { service: f(i / 4) } }));

describe('median and windows', () => {
  it('is the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
  });

  it('reads only the samples of the window and of the part', () => {
    const samples: MemorySample[] = [
      { at: 0, mb: { a: 100 } },
      { at: 10, mb: { a: 200, b: 1 } },
      { at: 20, mb: { a: 300 } },
    ];
    expect(windowMedian(samples, 'a', 5, 25)).toBe(250);
    expect(windowMedian(samples, 'b', 0, 25)).toBe(1);
    expect(windowMedian(samples, 'c', 0, 25)).toBeNull();
  });
});

describe('drift', () => {
  const w = { settleFrom: 5 * minute, windowMs: minute, loadEnd: 30 * minute };

  it('is flat memory within the limit', () => {
    const d = drift(series(30, () => 200), 'service', w, 10);
    expect(d).toEqual({ settledMB: 200, endMB: 200, changePct: 0, slopeMBPerMin: 0, within: true });
  });

  it('compares the end of the load with where memory settled, not with the start', () => {
    // climbs from 100 to 300 over the first 5 minutes, then stays
    const d = drift(series(30, (m) => (m < 5 ? 100 + 40 * m : 300)), 'service', w, 10);
    expect(d.settledMB).toBe(300);
    expect(d.changePct).toBe(0);
    expect(d.within).toBe(true);
  });

  it('finds a steady leak past the limit, and its slope', () => {
    // 2 MB a minute from 200 MB
    const d = drift(series(30, (m) => 200 + 2 * m), 'service', w, 10);
    expect(d.settledMB).toBe(211);
    expect(d.endMB).toBe(259);
    expect(d.changePct).toBe(22.7);
    expect(d.slopeMBPerMin).toBe(2);
    expect(d.within).toBe(false);
  });

  it('counts a fall past the limit too, and nothing without samples', () => {
    expect(drift(series(30, (m) => (m < 20 ? 200 : 150)), 'service', w, 10).within).toBe(false);
    expect(drift([], 'service', w, 10)).toEqual({ settledMB: null, endMB: null, changePct: null, slopeMBPerMin: null, within: false });
    expect(slopePerMinute([{ at: 0, mb: { a: 1 } }], 'a', 0, 10)).toBeNull();
  });
});

describe('task records', () => {
  const plain = { kind: 'plain' as const, taskId: 't1', status: 'task_completed', hasUsage: true, actions: plainActions(3) };

  it('is complete for a plain task with its scripted actions and usage', () => {
    expect(plainActions(2)).toEqual(['click_element', 'click_element', 'done']);
    expect(recordComplete(plain, 3)).toBe(true);
  });

  it('is incomplete with a step missing, without usage, without a recording or still running', () => {
    expect(recordComplete({ ...plain, actions: ['click_element', 'click_element', 'done'] }, 3)).toBe(false);
    expect(recordComplete({ ...plain, hasUsage: false }, 3)).toBe(false);
    expect(recordComplete({ ...plain, actions: null }, 3)).toBe(false);
    expect(recordComplete({ ...plain, status: 'running' }, 3)).toBe(false);
    expect(recordComplete({ ...plain, taskId: undefined }, 3)).toBe(false);
  });

  it('takes a taken-over task ending with done, and a stopped task without done', () => {
    expect(recordComplete({ ...plain, kind: 'takeover', actions: ['click_element', 'done'] }, 3)).toBe(true);
    expect(recordComplete({ ...plain, kind: 'takeover', actions: ['click_element'] }, 3)).toBe(false);
    expect(recordComplete({ kind: 'stopped', taskId: 't2', status: 'stopped', hasUsage: true, actions: ['wait'] }, 3)).toBe(true);
    expect(recordComplete({ kind: 'stopped', taskId: 't2', status: 'stopped', hasUsage: true, actions: ['wait', 'done'] }, 3)).toBe(false);
  });

  it('tallies outcomes: a started task without a complete record is lost, a refused start is not started', () => {
    const tasks = [
      plain,
      { ...plain, taskId: 't3', actions: ['done'] },
      { kind: 'stopped' as const, taskId: 't4', status: 'stopped', hasUsage: true, actions: [] },
      { kind: 'plain' as const, taskId: 't5', status: 'failed', hasUsage: true, actions: ['click_element'] },
      { kind: 'plain' as const },
    ];
    expect(tally(tasks, 3)).toEqual({ started: 4, completed: 1, stopped: 1, failed: 1, lost: 1, swept: 0, unexpected: 1 });
  });
});

describe('records read again at the end', () => {
  const ended = { kind: 'plain' as const, taskId: 't1', status: 'task_completed', hasUsage: true, actions: plainActions(3) };
  const minutes5 = 5 * minute;

  it('takes a record still there as it reads now', () => {
    expect(settleFinal(ended, { http: 200, status: 'task_completed', hasUsage: true }, 10 * minute, minutes5)).toEqual(ended);
    expect(recordComplete(settleFinal(ended, { http: 200, status: 'task_completed', hasUsage: false }, 0, minutes5), 3)).toBe(false);
  });

  it('counts a 404 past the retention as swept, with what it was when it ended', () => {
    const t = settleFinal(ended, { http: 404 }, 6 * minute, minutes5);
    expect(t).toEqual({ ...ended, swept: true });
    expect(tally([t], 3)).toEqual({ started: 1, completed: 1, stopped: 0, failed: 0, lost: 0, swept: 1, unexpected: 0 });
  });

  it('counts a 404 within the retention, without a retention or of a session not ended as lost', () => {
    for (const [ago, retention] of [[4 * minute, minutes5], [6 * minute, null], [null, minutes5]] as const) {
      const t = settleFinal(ended, { http: 404 }, ago, retention);
      expect(t.missing).toBe(true);
      expect(tally([t], 3)).toMatchObject({ lost: 1, swept: 0, completed: 0 });
    }
  });

  it('counts a task swept whose record was incomplete when it ended as lost', () => {
    const t = settleFinal({ ...ended, hasUsage: false }, { http: 404 }, 6 * minute, minutes5);
    expect(tally([t], 3)).toMatchObject({ lost: 1, swept: 0 });
  });
});

describe('store growth and the mix of sessions', () => {
  it('gives KB per task', () => {
    expect(kbPerTask(1024 * 1024, 3 * 1024 * 1024, 100)).toBe(20.5);
    expect(kbPerTask(0, 10, 0)).toBeNull();
  });

  it('ends half the sessions by their owner, a sixth each idle, taken over, stopped', () => {
    const kinds = Array.from({ length: 120 }, (_, n) => sessionKind(n));
    const count = (k: string) => kinds.filter((x) => x === k).length;
    expect([count('ended'), count('idle'), count('takeover'), count('stopped')]).toEqual([60, 20, 20, 20]);
  });
});
