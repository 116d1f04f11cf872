import { defineConfig } from 'vitest/config';

// npm run test:systemd: the shipped unit under a real systemd (needs root and systemd-nspawn).
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/systemd/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 300_000,
  },
});
