// The fence on a frozen daemon, with real processes on a PostgreSQL board: its keeper, a process
// of its own session, ends each run's whole tree before the lease runs out (an escapee, one that
// cleared its environment, what a keepDescendants profile keeps), whatever a worker wrote.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCgroupBase } from '../../src/proc/cgroup.js';
import { pidExists } from '../../src/proc/index.js';
import { readProcStat } from '../../src/proc/proc-stat.js';
import { api } from '../helpers/app.js';
import { startDaemon, tempDir, waitServing } from '../helpers/daemon.js';
import { hostConfig, identityNow, leaseLeft, workerOf } from '../helpers/host-daemon.js';
import { testSchema } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';

describe('the fence on a frozen daemon', () => {
  it('ends the escapee of a run whose whole group was killed, before the lease runs out', async () => {
    const { url, schema, pool } = testSchema();
    const dataDir = tempDir();
    const config = hostConfig(dataDir, 'alpha', { kind: 'postgres', url, schema });
    const daemon = startDaemon({ dataDir, config });
    const base = await waitServing(dataDir, daemon.pid, 30_000);
    const { id } = (await api(base, 'POST', '/tasks', { title: 'escape', assignee: 'escape' }))
      .body;
    const worker = await workerOf(base, id);
    const [run] = (await api(base, 'GET', `/tasks/${id}`)).body.runs;
    const jobFile = join(dataDir, 'runs', run.id, 'job');
    const escapee = identityNow(
      Number(
        await waitFor('the escapee', () =>
          existsSync(jobFile) ? readFileSync(jobFile, 'utf8') : null,
        ),
      ),
    );
    // Its own session once setsid has run (the pid is written as soon as it is spawned).
    await waitFor(
      'the escapee in a session of its own',
      () => readProcStat(escapee.pid)?.sid === escapee.pid,
    );
    // The fence's keeper is in no session of the run's.
    const keeper = Number(readdirSync(join(dataDir, 'keepers'))[0]!.split('.')[0]);
    expect(readProcStat(keeper)!.sid).not.toBe(readProcStat(worker.pid)!.sid);
    expect(readProcStat(keeper)!.sid).not.toBe(readProcStat(escapee.pid)!.sid);

    daemon.child.kill('SIGSTOP');
    try {
      // An operator's kill -- -PGID: the wrapper and the worker are gone, the escapee runs on.
      process.kill(-worker.pid, 'SIGKILL');
      await waitFor('the group gone', () => !pidExists(worker.pid, worker), 5000);
      expect(pidExists(escapee.pid, escapee)).toBe(true);
      await waitFor('the escapee ended', () => !pidExists(escapee.pid, escapee), 20_000);
      expect(await leaseLeft(pool, schema)).toBeGreaterThan(0);
    } finally {
      daemon.child.kill('SIGCONT');
    }
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }, 60_000);

  it('ends, by its cgroup, an escapee that left the group and dropped every variable of the run, before the lease runs out', async () => {
    if (runCgroupBase() === null) throw new Error('this test needs cgroup v2 with cgroup.kill');
    const { url, schema, pool } = testSchema();
    const dataDir = tempDir();
    const config = hostConfig(dataDir, 'alpha', { kind: 'postgres', url, schema });
    const daemon = startDaemon({ dataDir, config });
    const base = await waitServing(dataDir, daemon.pid, 30_000);
    const { id } = (await api(base, 'POST', '/tasks', { title: 'vanish', assignee: 'vanish' }))
      .body;
    const worker = await workerOf(base, id);
    const [run] = (await api(base, 'GET', `/tasks/${id}`)).body.runs;
    const jobFile = join(dataDir, 'runs', run.id, 'job');
    const pid = Number(
      await waitFor('the escapee', () =>
        existsSync(jobFile) ? readFileSync(jobFile, 'utf8') : null,
      ),
    );
    await waitFor('the escapee on its own', () => {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
      return readProcStat(pid)?.sid === pid && !env.includes('GATEHOUSE_RUN_ID');
    });
    const escapee = identityNow(pid);
    daemon.child.kill('SIGSTOP');
    try {
      process.kill(-worker.pid, 'SIGKILL');
      await waitFor('the escapee ended', () => !pidExists(escapee.pid, escapee), 20_000);
      expect(await leaseLeft(pool, schema)).toBeGreaterThan(0);
    } finally {
      daemon.child.kill('SIGCONT');
    }
    // Its run settled, the run's cgroup is removed with it.
    await waitFor('the run ended', async () => {
      const [r] = (await api(base, 'GET', `/tasks/${id}`)).body.runs;
      return r.endedAt !== null;
    });
    await waitFor(
      'its cgroup removed',
      () => !readdirSync(runCgroupBase()!).some((name) => name.endsWith(run.id)),
    );
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }, 60_000);

  it('ends what a keepDescendants profile keeps while its run is open, before the lease runs out', async () => {
    const { url, schema, pool } = testSchema();
    const dataDir = tempDir();
    const config = hostConfig(dataDir, 'alpha', { kind: 'postgres', url, schema });
    const daemon = startDaemon({ dataDir, config });
    const base = await waitServing(dataDir, daemon.pid, 30_000);
    const { id } = (await api(base, 'POST', '/tasks', { title: 'keep', assignee: 'keep' })).body;
    const worker = await workerOf(base, id);
    const [run] = (await api(base, 'GET', `/tasks/${id}`)).body.runs;
    const jobFile = join(dataDir, 'runs', run.id, 'job');
    const pid = Number(
      await waitFor('the kept job', () =>
        existsSync(jobFile) ? readFileSync(jobFile, 'utf8') : null,
      ),
    );
    await waitFor('the kept job on its own', () => readProcStat(pid)?.sid === pid);
    const kept = identityNow(pid);
    daemon.child.kill('SIGSTOP');
    try {
      await waitFor(
        'the worker and what it kept ended',
        () => !pidExists(worker.pid, worker) && !pidExists(kept.pid, kept),
        20_000,
      );
      expect(await leaseLeft(pool, schema)).toBeGreaterThan(0);
    } finally {
      daemon.child.kill('SIGCONT');
    }
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }, 60_000);

  it('ends a worker that rewrote the fence file of older versions, before the lease runs out', async () => {
    const { url, schema, pool } = testSchema();
    const dataDir = tempDir();
    const config = hostConfig(dataDir, 'alpha', { kind: 'postgres', url, schema });
    const daemon = startDaemon({ dataDir, config });
    const base = await waitServing(dataDir, daemon.pid, 30_000);
    const { id } = (await api(base, 'POST', '/tasks', { title: 'forge', assignee: 'forge' })).body;
    const worker = await workerOf(base, id);
    await waitFor(
      'the forged fence',
      () =>
        existsSync(join(dataDir, 'fence')) &&
        readFileSync(join(dataDir, 'fence'), 'utf8').startsWith('9999'),
    );
    daemon.child.kill('SIGSTOP');
    try {
      await waitFor('the worker ended', () => !pidExists(worker.pid, worker), 20_000);
      expect(await leaseLeft(pool, schema)).toBeGreaterThan(0);
    } finally {
      daemon.child.kill('SIGCONT');
    }
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }, 60_000);
});
