// The daemon while its PostgreSQL restarts under load (`pg_ctl restart -m fast`, as an operator
// or a package upgrade does): every answer is a success or a clear 503, nothing answered is
// lost, and it serves and dispatches again by itself. The server is this test's own.
import { describe, expect, it } from 'vitest';
import { startCluster } from '../../scripts/pg-cluster.mjs';
import { api } from '../helpers/app.js';
import { startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

describe('the daemon on PostgreSQL', () => {
  it('lives through its database restarting under load: 201 or 503, never 500, every answered task kept, serving again by itself', async () => {
    const cluster = await startCluster();
    if (cluster.missing !== undefined) throw new Error(cluster.missing);
    try {
      const dataDir = tempDir();
      const config = writeConfig(dataDir, {
        store: { kind: 'postgres', url: cluster.url, schema: 'gatehouse', poolSize: 4 },
        workers: {
          tickSeconds: 0.2,
          // The load's tasks wait (no slots), so the one after is not queued behind them.
          profiles: {
            done: profile('complete'),
            parked: profile('complete', { maxConcurrent: 0 }),
          },
          defaultProfile: 'done',
        },
      });
      const daemon = startDaemon({ dataDir, config });
      const base = await waitServing(dataDir, daemon.pid, 30_000);
      const answered: string[] = [];
      const statuses = new Map<string, number>();
      let stop = false;
      const load = (async () => {
        while (!stop) {
          const results = await Promise.all(
            [1, 2, 3, 4].map(() =>
              api(base, 'POST', '/tasks', { title: 'through a restart', assignee: 'parked' }),
            ),
          );
          for (const res of results) {
            const key = `${res.status} ${res.body?.error?.code ?? ''}`;
            statuses.set(key, (statuses.get(key) ?? 0) + 1);
            if (res.status === 201) answered.push(res.body.id);
          }
        }
      })();
      try {
        await waitFor('load before the restart', () => answered.length >= 20);
        const before = answered.length;
        await cluster.restart();
        await waitFor('answers after the restart', () => answered.length >= before + 20, 30_000);
      } finally {
        stop = true;
        await load;
      }
      for (const key of statuses.keys()) expect(key).toMatch(/^201 $|^503 STORAGE_UNAVAILABLE$/);
      expect(daemon.child.exitCode).toBeNull();
      await waitFor('ready again', async () => (await api(base, 'GET', '/ready')).status === 200);
      for (const id of answered)
        expect((await api(base, 'GET', `/tasks/${id}`)).body.id, 'an answered task').toBe(id);
      // The dispatcher works again too: a task created now runs to done.
      const after = (await api(base, 'POST', '/tasks', { title: 'after the restart' })).body;
      await waitFor(
        'dispatched after the restart',
        async () => (await api(base, 'GET', `/tasks/${after.id}`)).body.status === 'done',
        30_000,
      );
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toMatchObject({ code: 0 });
    } finally {
      cluster.stop();
    }
  });
});
