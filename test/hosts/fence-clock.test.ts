// The fence when a daemon's wall clock steps (libfaketime; its boot clock untouched): stepped
// back while it is frozen, its worker still ends before the lease; stepped forward while it
// serves, nothing of it is ended.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pidExists } from '../../src/proc/index.js';
import { api } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { CLUSTER, endedWhileFrozen, hostRunning } from '../helpers/host-daemon.js';
import { waitFor } from '../helpers/wait.js';

/** libfaketime (Debian's faketime): a daemon whose wall clock the test steps. */
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
    const clock = steppedClock();
    const host = await hostRunning('hang', clock.env);
    const { worker } = host;
    await endedWhileFrozen(
      host,
      () => !pidExists(worker.pid, worker),
      () => clock.step('-60s'),
    );
    await host.stop();
  }, 60_000);

  it("keeps a healthy host's worker when its clock steps forward two minutes", async () => {
    const clock = steppedClock();
    const host = await hostRunning('hang', clock.env);
    const { pool, schema, worker } = host;
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
    const task = (await api(host.base, 'GET', `/tasks/${host.taskId}`)).body;
    expect(task.status).toBe('running');
    expect(task.runs).toHaveLength(1);
    await api(host.base, 'POST', `/tasks/${host.taskId}/archive`);
    await host.stop();
  }, 60_000);
});
