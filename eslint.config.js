// Lint rules: type-aware, so floating promises and misused async are caught.
import tseslint from 'typescript-eslint';

const TASK_WRITES = [
  {
    group: ['**/task-writes', '**/task-writes.js'],
    message: 'Only the moves (src/kanban/moves) may write tasks: call a move instead.',
  },
];
const ENGINES = [
  {
    group: ['**/store/sqlite/*', '**/store/postgres/*'],
    message:
      'Nothing outside src/kanban/store names an engine: use the contract (store/contract.ts) and its records (store/records/).',
  },
];
const OTHER_ENGINE = 'An engine imports only the contract and its records, never the other engine.';
const OUTSIDE_THE_STORE_PATHS = [
  { name: 'better-sqlite3', message: 'Only the store (src/kanban/store) opens the database.' },
  { name: 'pg', message: 'Only the store (src/kanban/store) opens the database.' },
  {
    name: '@sinclair/typebox',
    allowTypeImports: true,
    message: 'Build schemas with src/schema-types.ts: loading TypeBox costs 80 ms of start-up.',
  },
  {
    name: '@sinclair/typebox/value',
    allowTypeImports: true,
    message: 'Loaded only to explain an invalid config (src/config/load.ts).',
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'src/cli/api-types.ts',
      'node_modules/**',
      'bin/**',
      'examples/**',
      'test/fixtures/**',
      '**/*.mjs',
      'eslint.config.js',
      'vitest.config.ts',
      'vitest.systemd.config.ts',
      'vitest.long.config.ts',
      'vitest.bench.config.ts',
      'vitest.unit.config.ts',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      // Fastify hooks and plugins are async by convention even when they do not await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Only the moves write tasks.status: the task writer and the database stay behind the store.
    files: ['src/**/*.ts'],
    ignores: ['src/kanban/moves/**', 'src/kanban/store/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...TASK_WRITES, ...ENGINES], paths: OUTSIDE_THE_STORE_PATHS },
      ],
    },
  },
  {
    files: ['src/kanban/moves/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ENGINES, paths: OUTSIDE_THE_STORE_PATHS }],
    },
  },
  {
    // Each engine implements the contract on its own: neither borrows from the other.
    files: ['src/kanban/store/sqlite/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/postgres/*'], message: OTHER_ENGINE }] },
      ],
    },
  },
  {
    files: ['src/kanban/store/postgres/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/sqlite/*'], message: OTHER_ENGINE }] },
      ],
    },
  },
  {
    // One clock (src/clock.ts): the wall time is read from the clock a module is given, so tests
    // move it; a wait's own length is performance.now(). The OS layer and SQLite (the database's
    // clock is this machine's) read the system's as PostgreSQL reads its server's.
    files: ['src/**/*.ts'],
    ignores: ['src/clock.ts', 'src/proc/**', 'src/kanban/store/sqlite/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message:
            'Read the wall time from the Clock you are given (src/clock.ts), or time a wait with performance.now().',
        },
        {
          selector: "CallExpression[callee.name='bootNowMs']",
          message: 'Read the boot time from the Clock you are given (src/clock.ts): clock.boot().',
        },
      ],
    },
  },
  {
    // The data dir's lock is a kernel lock held through SQLite, not the board's database.
    files: ['src/gateway/instance-lock.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // Tests read JSON bodies whose shape each assertion checks; the dashboard draws the API's
    // answers field by field (their shapes are docs/api.md's).
    files: ['test/**/*.ts', 'bench/**/*.ts', 'dashboard/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
