/** Unit tests run alone (`npm run jest -- --selectProjects unit`); e2e tests need the local stack that scripts/test.sh starts. */
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] };
module.exports = {
  projects: [
    { displayName: 'unit', testEnvironment: 'node', transform, testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/unit/**/*.test.ts'] },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    { displayName: 'bench', testEnvironment: 'node', transform, testMatch: ['<rootDir>/bench/**/*.bench.ts'] },
    { displayName: 'eval', testEnvironment: 'node', transform, testMatch: ['<rootDir>/eval/**/*.eval.ts'] },
  ],
  testTimeout: 120000,
  // The longest end-to-end files first (a global option: it orders every project's files).
  testSequencer: '<rootDir>/test/support/sequencer.js',
};
