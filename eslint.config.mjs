import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  // test/fixtures/tool-registry: fixtures meant not to compile, outside the tsconfig (test/unit/tool-registry-types.test.ts compiles them).
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'scripts/**', '*.js', '*.mjs', 'test/fixtures/tool-registry/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Workflow code is replayed: it must stay deterministic and free of I/O.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Workflow code must not use Node built-ins.' })),
            ...['mongodb', 'ioredis', 'pino', 'express', 'socket.io', 'playwright-core', 'openai', '@anthropic-ai/sdk', '@temporalio/activity', '@temporalio/client', '@temporalio/worker'].map(
              (name) => ({ name, message: 'Workflow code must not do I/O; call an activity.' }),
            ),
          ],
          patterns: [{ group: ['**/activities/*', '**/store/*', '**/browser/*', '**/api/*', '**/agent/*', '!**/*.types'], message: 'Import only types of activities.', allowTypeImports: true }],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' }, { name: 'setInterval', message: 'Use Temporal timers.' }, { name: 'fetch', message: 'Call an activity.' }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Use uuid4() or a seeded value.' }],
    },
  },
);
