import { defineConfig } from 'vitest/config';

/**
 * `npm run test:unit`: the pure modules (the transition table, outcome rules, agent readers,
 * forge rules, config checks), in seconds, with no build, browser, database or agent CLI.
 * `npm test` runs them too.
 */
export default defineConfig({
  test: {
    name: 'unit',
    include: ['test/unit/**/*.test.ts'],
    pool: 'threads',
  },
});
