import { childProcessesMemory, descendants, parentOf, residentBytes } from './process-memory';

describe('child process memory', () => {
  it('finds every process below a root, not beside it', () => {
    const parents = new Map([
      [10, 1],
      [11, 10],
      [12, 11],
      [13, 10],
      [20, 1],
    ]);
    expect(descendants(parents, 10).sort()).toEqual([11, 12, 13]);
    expect(descendants(parents, 12)).toEqual([]);
  });

  it('reads the parent pid after a command name with spaces and parentheses', () => {
    expect(parentOf('4242 (chrome (renderer) x) S 4100 4242 4242 0 -1')).toBe(4100);
    expect(parentOf('')).toBeNull();
  });

  it('reads resident bytes from the status text', () => {
    expect(residentBytes('Name:\tchrome\nVmRSS:\t  2048 kB\nThreads: 3\n')).toBe(2048 * 1024);
    expect(residentBytes('Name:\tkthread\n')).toBe(0);
  });

  it('sums the memory of a real child process', async () => {
    if (process.platform !== 'linux') return;
    const { spawn } = await import('node:child_process');
    const child = spawn('sleep', ['5']);
    try {
      await new Promise((r) => child.once('spawn', r));
      expect(await childProcessesMemory()).toBeGreaterThan(0);
    } finally {
      child.kill();
    }
  });
});
