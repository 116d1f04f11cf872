import { defineConfig } from 'vitest/config';

// Tests spawn and signal real processes: each file runs in its own forked process.
export default defineConfig({
  test: {
    pool: 'forks',
    // One file at a time: the chaos and soak runs load both cores, and timing-sensitive tests
    // beside them would measure the machine rather than gatehouse.
    fileParallelism: false,
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
