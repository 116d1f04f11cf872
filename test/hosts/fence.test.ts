// The fence on a frozen daemon, with real processes on a PostgreSQL board: its keeper, a process
// of its own session, ends each run's whole tree before the lease runs out (an escapee, one that
// cleared its environment, what a keepDescendants profile keeps), whatever a worker wrote.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCgroupBase } from '../../src/proc/cgroup.js';
import { pidExists, type ProcessIdentity } from '../../src/proc/index.js';
import { readProcStat } from '../../src/proc/proc-stat.js';
import { api } from '../helpers/app.js';
import {
  endedWhileFrozen,
  hostRunning,
  identityNow,
  type RunningHost,
} from '../helpers/host-daemon.js';
import { waitFor } from '../helpers/wait.js';

/** The background job the worker named in its run folder, once `settled` holds of its pid. */
async function backgroundJob(
  host: RunningHost,
  settled: (pid: number) => boolean,
): Promise<ProcessIdentity> {
  const file = join(host.dataDir, 'runs', host.runId, 'job');
  // Whole: the worker's write may be read half done (an empty file).
  const pid = await waitFor('the job', () => {
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    return /^\d+$/.test(text) ? Number(text) : null;
  });
  // The pid is written as soon as it is spawned: setsid (and env -i) run just after.
  await waitFor('the job on its own', () => settled(pid));
  return identityNow(pid);
}

const inOwnSession = (pid: number) => readProcStat(pid)?.sid === pid;
const gone = (p: ProcessIdentity) => () => !pidExists(p.pid, p);

describe('the fence on a frozen daemon', () => {
  it('ends the escapee of a run whose whole group was killed, before the lease runs out', async () => {
    const host = await hostRunning('escape');
    const escapee = await backgroundJob(host, inOwnSession);
    // The fence's keeper is in no session of the run's.
    const keeper = Number(readdirSync(join(host.dataDir, 'keepers'))[0]!.split('.')[0]);
    expect(readProcStat(keeper)!.sid).not.toBe(readProcStat(host.worker.pid)!.sid);
    expect(readProcStat(keeper)!.sid).not.toBe(escapee.pid);
    await endedWhileFrozen(host, gone(escapee), async () => {
      // An operator's kill -- -PGID: the wrapper and the worker are gone, the escapee runs on.
      process.kill(-host.worker.pid, 'SIGKILL');
      await waitFor('the group gone', gone(host.worker), 5000);
      expect(pidExists(escapee.pid, escapee)).toBe(true);
    });
    await host.stop();
  }, 60_000);

  it('ends, by its cgroup, an escapee that left the group and dropped every variable of the run, before the lease runs out', async () => {
    const base = runCgroupBase();
    if (base === null) throw new Error('this test needs cgroup v2 with cgroup.kill');
    const host = await hostRunning('vanish');
    const escapee = await backgroundJob(
      host,
      (pid) =>
        inOwnSession(pid) && !readFileSync(`/proc/${pid}/environ`, 'utf8').includes('GATEHOUSE_'),
    );
    await endedWhileFrozen(host, gone(escapee), () => process.kill(-host.worker.pid, 'SIGKILL'));
    // Its run settled, the run's cgroup is removed with it.
    await waitFor('the run ended', async () => {
      const [r] = (await api(host.base, 'GET', `/tasks/${host.taskId}`)).body.runs;
      return r.endedAt !== null;
    });
    await waitFor(
      'its cgroup removed',
      () => !readdirSync(base).some((name) => name.endsWith(host.runId)),
    );
    // Its only run: the task gave up after the fence, so no second run left another escapee.
    const task = (await api(host.base, 'GET', `/tasks/${host.taskId}`)).body;
    expect([task.status, task.runs.length]).toEqual(['blocked', 1]);
    await host.stop();
  }, 60_000);

  it('ends what a keepDescendants profile keeps while its run is open, before the lease runs out', async () => {
    const host = await hostRunning('keep');
    const kept = await backgroundJob(host, inOwnSession);
    await endedWhileFrozen(host, () => gone(host.worker)() && gone(kept)());
    await host.stop();
  }, 60_000);

  it('ends a worker that rewrote the fence file of older versions, before the lease runs out', async () => {
    const host = await hostRunning('forge');
    // It forges the file every 50 ms: frozen, the daemon no longer writes it, the forgery stays.
    await waitFor('the forged fence', () =>
      existsSync(join(host.dataDir, 'runs', host.runId, 'forged')),
    );
    const fence = join(host.dataDir, 'fence');
    await endedWhileFrozen(host, gone(host.worker), () =>
      waitFor('the forgery in place', () => readFileSync(fence, 'utf8').startsWith('9999')),
    );
    await host.stop();
  }, 60_000);

  it("ends a frozen daemon's worker before its lease runs out, by its fence keeper alone", async () => {
    const host = await hostRunning('hang');
    await endedWhileFrozen(host, gone(host.worker));
    // Back in time to renew, it sees its worker gone: the run ends, the task is not stuck.
    await waitFor('the run ended', async () => {
      const [r] = (await api(host.base, 'GET', `/tasks/${host.taskId}`)).body.runs;
      return r.endedAt !== null;
    });
    await host.stop();
  }, 60_000);
});
