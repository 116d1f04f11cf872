import { configDefaults, defineConfig } from 'vitest/config';

/** The long runs: `npm run test:long` (chaos, soak) and `npm run test:systemd`; CI runs both. */
export const LONG_RUNS = ['test/chaos/**', 'test/soak/**', 'test/systemd/**'];

// `npm test`: every other file, several at a time, each in its own forked process (tests spawn
// and signal real processes). Tests wait for states with deadlines rather than for time, so a
// loaded machine makes them slower, not red; speed is measured in bench/, not asserted here.
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 3,
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...LONG_RUNS],
    // The PostgreSQL cluster is stopped before the process check runs (teardowns run in reverse).
    globalSetup: ['test/global-setup.ts', 'test/postgres-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
