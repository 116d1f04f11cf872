// The fence when a daemon's wall clock steps (libfaketime; its boot clock untouched): stepped
// back while it is frozen, its worker still ends before the lease; stepped forward while it
// serves, nothing of it is ended.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pidExists } from '../../src/proc/index.js';
import { api } from '../helpers/app.js';
import { startDaemon, tempDir, waitServing } from '../helpers/daemon.js';
import { CLUSTER, hostConfig, leaseLeft, workerOf } from '../helpers/host-daemon.js';
import { testSchema } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';

/** libfaketime (Debian's faketime): a daemon whose wall clock the test steps, its boot clock untouched. */
const FAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

function steppedClock(): { env: NodeJS.ProcessEnv; step: (offset: string) => void } {
  if (!existsSync(FAKETIME))
    throw new Error(`${FAKETIME} is missing: apt-get install faketime (.ci/run does)`);
  const file = join(tempDir(), 'offset');
  writeFileSync(file, '+0\n');
  return {
    // Every process of the daemon reads the offset (its keeper and workers inherit it); timers
    // and the boot clock are left alone, as a real NTP step leaves them.
    env: {
      LD_PRELOAD: FAKETIME,
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_NO_CACHE: '1',
      DONT_FAKE_MONOTONIC: '1',
    },
    step: (offset) => writeFileSync(file, `${offset}\n`),
  };
}

describe('the fence when the wall clock steps', () => {
  it("ends a frozen daemon's worker before its lease runs out when its clock was stepped back a minute", async () => {
    const { url, schema, pool } = testSchema();
    const dataDir = tempDir();
    const clock = steppedClock();
    const daemon = startDaemon({
      dataDir,
      config: hostConfig(dataDir, 'alpha', { kind: 'postgres', url, schema }),
      env: clock.env,
    });
    const base = await waitServing(dataDir, daemon.pid, 30_000);
    const { id } = (await api(base, 'POST', '/tasks', { title: 'long', assignee: 'hang' })).body;
    const worker = await workerOf(base, id);
    daemon.child.kill('SIGSTOP');
    try {
      clock.step('-60s');
      await waitFor('the worker ended', () => !pidExists(worker.pid, worker), 20_000);
      expect(await leaseLeft(pool, schema)).toBeGreaterThan(0);
    } finally {
      daemon.child.kill('SIGCONT');
    }
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }, 60_000);

  it("keeps a healthy host's worker when its clock steps forward two minutes", async () => {
    const { url, schema, pool } = testSchema();
    const dataDir = tempDir();
    const clock = steppedClock();
    const daemon = startDaemon({
      dataDir,
      config: hostConfig(dataDir, 'alpha', { kind: 'postgres', url, schema }),
      env: clock.env,
    });
    const base = await waitServing(dataDir, daemon.pid, 30_000);
    const { id } = (await api(base, 'POST', '/tasks', { title: 'long', assignee: 'hang' })).body;
    const worker = await workerOf(base, id);
    const dbNow = async () =>
      Number(
        (await pool.query('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now'))
          .rows[0].now,
      );
    clock.step('+120s');
    // A whole lease and more of renewals after the step (the database's clock): a fence on the
    // wall clock would have ended the worker by then.
    const after = (await dbNow()) + (CLUSTER.leaseSeconds + 2) * 1000;
    await waitFor(
      'renewals for a lease after the step',
      async () => {
        const { rows } = await pool.query(`SELECT renewed_at FROM "${schema}".hosts`);
        return Number(rows[0].renewed_at) > after;
      },
      30_000,
    );
    expect(pidExists(worker.pid, worker)).toBe(true);
    const task = (await api(base, 'GET', `/tasks/${id}`)).body;
    expect(task.status).toBe('running');
    expect(task.runs).toHaveLength(1);
    await api(base, 'POST', `/tasks/${id}/archive`);
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }, 60_000);
});
