import { configDefaults, defineConfig } from 'vitest/config';

/** The long runs: `npm run test:long` (chaos, soak) and `npm run test:systemd`; CI runs both. */
export const LONG_RUNS = ['test/chaos/**', 'test/soak/**', 'test/systemd/**'];

/**
 * What runs on both stores: the board, its moves and supervision, the API and websocket, the
 * platforms' state. The rest (start-up, CLI, SQLite's own files) is about one engine or none.
 */
const BOTH_ENGINES = [
  'test/kanban/**/*.test.ts',
  'test/api/**/*.test.ts',
  'test/platforms/**/*.test.ts',
  'test/agents/**/*.test.ts',
  'test/pulls/**/*.test.ts',
  'test/sandbox/**/*.test.ts',
  'test/mcp/**/*.test.ts',
];
/** Tests of SQLite's own files (its migrations of older boards). */
const SQLITE_ONLY = ['test/kanban/migrations.test.ts'];

// `npm test`: every file, several at a time, each in its own forked process (tests spawn and
// signal real processes); then the board's suites again on PostgreSQL. Tests wait for states
// with deadlines rather than for time, so a loaded machine makes them slower, not red; speed is
// measured in bench/, not asserted here.
const common = {
  pool: 'forks' as const,
  maxWorkers: 3,
  testTimeout: 60_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    // Once for both projects. The PostgreSQL cluster is stopped before the process check runs
    // (teardowns run in reverse).
    globalSetup: ['test/global-setup.ts', 'test/postgres-setup.ts', 'test/agents-setup.ts'],
    projects: [
      {
        test: {
          ...common,
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...LONG_RUNS],
        },
      },
      {
        test: {
          ...common,
          name: 'postgres',
          include: BOTH_ENGINES,
          exclude: [...configDefaults.exclude, ...LONG_RUNS, ...SQLITE_ONLY],
          env: { GATEHOUSE_TEST_STORE: 'postgres' },
        },
      },
    ],
  },
});
