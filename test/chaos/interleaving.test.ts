import { describe, expect, it } from 'vitest';
import { runCase, type CaseReport } from './interleave.js';

// A short run here; `npm run soak:interleave` runs it for GH_INTERLEAVE_MINUTES (30 by default).
const minutes = Number(process.env.GH_INTERLEAVE_MINUTES ?? 0);
const firstSeed = Number(process.env.GH_INTERLEAVE_SEED ?? 20261130);

// The same interleavings on either store: the promises do not depend on the engine.
describe.each(['sqlite', 'postgres'] as const)(
  'randomized interleavings of workers, operators and daemon restarts, on %s',
  (engine) => {
    it(
      'never two groups for one task, nothing of a settled run alive, one outcome per run, nothing stuck',
      async () => {
        const reports: CaseReport[] = [];
        const until = Date.now() + minutes * 60_000;
        for (let seed = firstSeed; reports.length < 2 || Date.now() < until; seed++) {
          reports.push(await runCase(seed, 24, engine));
        }
        const total = (key: 'actions' | 'samples' | 'tasks' | 'runs') =>
          reports.reduce((sum, r) => sum + r[key], 0);
        console.log(
          `interleavings on ${engine}: ${reports.length} cases, ${total('actions')} actions, ${total('tasks')} tasks, ${total('runs')} runs, ${total('samples')} process-table samples`,
        );
        expect(reports.flatMap((r) => r.violations)).toEqual([]);
      },
      Math.max(5, Number(process.env.GH_INTERLEAVE_MINUTES ?? 0) + 5) * 60_000,
    );
  },
);
