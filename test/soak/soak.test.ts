import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.js';
import { spawnTracked } from '../helpers/procs.js';

describe('soak', () => {
  it(
    'keeps every promise for two minutes of faults (npm run soak -- --minutes 2)',
    async () => {
      const soak = spawnTracked([process.execPath, join(ROOT, 'soak/soak.mjs'), '--minutes', '2'], {
        cwd: ROOT,
      });
      const { code } = await soak.closed;
      const report = soak.stdout();
      expect(report, `${report}\n${soak.stderr().slice(-3000)}`).toContain('| violations | 0 |');
      expect(report).toMatch(/\| SQLite integrity_check \| ok \|/);
      expect(code).toBe(0);
    },
    6 * 60_000,
  );
});
