import { defineConfig } from 'vitest/config';

// npm run test:long: the chaos and soak runs, one file at a time (each loads both cores).
export default defineConfig({
  test: {
    pool: 'forks',
    fileParallelism: false,
    include: ['test/chaos/**/*.test.ts', 'test/soak/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts', 'test/postgres-setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
});
