import { defineConfig } from 'vitest/config';

/** The benchmarks that use the tests' TypeScript doubles (`npm run bench` runs them). */
export default defineConfig({
  test: {
    include: ['bench/**/*.bench.ts'],
    pool: 'forks',
    testTimeout: 600_000,
    globalSetup: ['test/global-setup.ts'],
  },
});
