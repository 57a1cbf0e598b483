import type { Test } from '@jest/test-result';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const LongFirst = require('../support/sequencer.js');

const context = { config: { cacheDirectory: '/nonexistent', id: 'e2e' }, hasteFS: { getSize: (path: string) => path.length } };
const test = (name: string) => ({ path: `/repo/test/e2e/${name}.test.ts`, context, duration: undefined }) as unknown as Test;

describe('the end-to-end files order', () => {
  it('starts the longest known files first, in their order, then the rest', () => {
    const sorted: Test[] = new LongFirst({ contexts: [], globalConfig: {} }).sort(['bounds', 'schemathesis', 'tasks', 'real-model', 'handover'].map(test));
    const names = sorted.map((t) => t.path.replace(/^.*\//, '').replace('.test.ts', ''));
    expect(names.slice(0, 3)).toEqual(['schemathesis', 'real-model', 'handover']);
    expect(names.slice(3).sort()).toEqual(['bounds', 'tasks']);
  });
});
