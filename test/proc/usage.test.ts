// Resource sampling where there is no /proc goes through pidusage; on Linux both paths can run,
// so the pidusage one is checked here against the /proc snapshot figures for the same group.
import { describe, expect, it } from 'vitest';
import { PidusageSampler, SnapshotSampler } from '../../src/kanban/dispatch/resource-sampler.js';
import { listProcesses, readProcStat } from '../../src/proc/index.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';

describe('resource sampling', () => {
  it('pidusage and the /proc snapshot agree on a busy process group', async () => {
    // A busy loop with a child of its own in the same group, holding some memory.
    const busy = spawnTracked([
      process.execPath,
      '-e',
      "require('child_process').spawn('sleep', ['60'], { stdio: 'ignore' }); const keep = Buffer.alloc(64 << 20, 1); for (;;) keep[0]++;",
    ]);
    const snapshot = new SnapshotSampler();
    const pidusage = new PidusageSampler();
    const start = Date.now();
    // Both count CPU from their previous reading: the first one of each starts the clock.
    const first = listProcesses();
    await snapshot.sample(first, [busy.pid], start);
    await pidusage.sample(first, [busy.pid]);
    const before = readProcStat(busy.pid)!.cpuSeconds;
    await waitFor(
      'a second of CPU used',
      () => (readProcStat(busy.pid)?.cpuSeconds ?? 0) - before >= 1,
      30_000,
    );
    const procs = listProcesses();
    const viaProc = (await snapshot.sample(procs, [busy.pid], Date.now())).get(busy.pid)!;
    const viaPidusage = (await pidusage.sample(procs, [busy.pid])).get(busy.pid)!;
    expect(viaProc.cpuPercent).toBeGreaterThan(20);
    expect(viaPidusage.cpuPercent).toBeGreaterThan(20);
    expect(viaProc.rssBytes).toBeGreaterThan(64 << 20);
    expect(viaPidusage.rssBytes / viaProc.rssBytes).toBeGreaterThan(0.8);
    expect(viaPidusage.rssBytes / viaProc.rssBytes).toBeLessThan(1.25);
    expect(procs.filter((p) => p.pgid === busy.pid).length).toBe(2);
  });
});
