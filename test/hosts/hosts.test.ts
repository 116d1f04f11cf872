// Hosts and their leases, with the real daemon: it registers and keeps its id across a restart,
// its lease is renewed through an operator's LOCK TABLE, and a host that died is declared dead
// by another, its run lost and its task run there.
import { describe, expect, it } from 'vitest';
import { pidExists } from '../../src/proc/index.js';
import { api } from '../helpers/app.js';
import { startDaemon, tempDir, waitServing } from '../helpers/daemon.js';
import { hostConfig, hostsOf, kinds, workerOf } from '../helpers/host-daemon.js';
import { testSchema } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';

describe('hosts', () => {
  it.each(['sqlite', 'postgres'])(
    'on %s, a daemon joins as a host, shown by GET /hosts, and keeps its id across a restart',
    async (engine) => {
      const dataDir = tempDir();
      const pg = engine === 'postgres' ? testSchema() : null;
      const store = pg ? { kind: 'postgres', url: pg.url, schema: pg.schema } : undefined;
      const config = hostConfig(dataDir, 'alpha', store);
      const first = startDaemon({ dataDir, config });
      const base = await waitServing(dataDir, first.pid, 30_000);
      // It answers /health from the moment it listens; it joins the board just after.
      const [host, ...others] = await waitFor('alpha to join', async () => {
        const list = await hostsOf(base);
        return list.length > 0 ? list : null;
      });
      expect(others).toEqual([]);
      expect(host).toMatchObject({
        name: 'alpha',
        state: 'active',
        capacity: 8,
        profiles: expect.arrayContaining(['done', 'hang']),
      });
      expect(host.leaseExpiresAt - host.renewedAt).toBe(10_000);
      await waitFor('a renewal', async () => (await hostsOf(base))[0].renewedAt > host.renewedAt);
      expect((await kinds(base)).filter((k) => k === 'host_joined')).toHaveLength(1);

      first.child.kill('SIGTERM');
      await first.exited;
      const second = startDaemon({ dataDir, config });
      const again = await waitServing(dataDir, second.pid, 30_000);
      expect((await hostsOf(again)).map((h: { id: number }) => h.id)).toEqual([host.id]);
      expect((await kinds(again)).filter((k) => k === 'host_joined')).toHaveLength(1);
      second.child.kill('SIGTERM');
      await second.exited;
    },
    60_000,
  );
});

describe('hosts sharing a board on PostgreSQL', () => {
  it('declares a host dead once its lease and grace have run out; its run is lost, its task runs on another host', async () => {
    const { url, schema } = testSchema();
    const store = { kind: 'postgres', url, schema };
    const dirA = tempDir();
    const a = startDaemon({ dataDir: dirA, config: hostConfig(dirA, 'alpha', store) });
    const baseA = await waitServing(dirA, a.pid, 30_000);
    const { id } = (await api(baseA, 'POST', '/tasks', { title: 'long', assignee: 'hang' })).body;
    const worker = await workerOf(baseA, id);
    const [alpha] = await hostsOf(baseA);

    // The daemon dies; its worker goes on until the fence ends it.
    a.child.kill('SIGKILL');
    await a.exited;
    const dirB = tempDir();
    const b = startDaemon({ dataDir: dirB, config: hostConfig(dirB, 'beta', store) });
    const baseB = await waitServing(dirB, b.pid, 30_000);
    await waitFor(
      'alpha declared dead',
      async () =>
        (await hostsOf(baseB)).find((h: { id: number }) => h.id === alpha.id).state === 'dead',
      30_000,
    );
    // By then nothing of alpha's run is alive: the task may run again.
    expect(pidExists(worker.pid, worker)).toBe(false);
    const detail = await waitFor('the task running on beta', async () => {
      const t = (await api(baseB, 'GET', `/tasks/${id}`)).body;
      return t.runs.length === 2 && t.runs[1].pid > 0 ? t : null;
    });
    expect(detail.runs[0]).toMatchObject({ outcome: 'lost', host: 'alpha' });
    expect(detail.runs[0].error).toContain('stopped renewing its lease');
    expect(detail.runs[1]).toMatchObject({ host: 'beta', endedAt: null });
    expect(detail.consecutiveFailures).toBe(1);
    const events = (await api(baseB, 'GET', '/events?limit=500')).body.events;
    const dead = events.find((e: { kind: string }) => e.kind === 'host_dead');
    expect(dead.payload).toMatchObject({ hostId: alpha.id, name: 'alpha', lostRuns: 1 });
    expect(await kinds(baseB, id)).toContain('lost');

    await api(baseB, 'POST', `/tasks/${id}/archive`);
    b.child.kill('SIGTERM');
    await b.exited;

    // alpha's data dir names a host now dead: started again, it joins as a new host.
    const again = startDaemon({ dataDir: dirA, config: hostConfig(dirA, 'alpha', store) });
    const baseAgain = await waitServing(dirA, again.pid, 30_000);
    // It answers /health from the moment it listens; it joins the board just after.
    const all = await waitFor('alpha to join again', async () => {
      const list = await hostsOf(baseAgain);
      return list.length === 3 ? list : null;
    });
    expect(all.map((h: { name: string; state: string }) => [h.name, h.state])).toEqual([
      ['alpha', 'dead'],
      ['beta', 'active'],
      ['alpha', 'active'],
    ]);
    again.child.kill('SIGTERM');
    await again.exited;
  }, 90_000);

  it("keeps renewing a host's lease while an operator's LOCK TABLE holds a dashboard's worth of readers, whose reads answer 503 within seconds", async () => {
    const { url, schema, pool } = testSchema();
    const dataDir = tempDir();
    const daemon = startDaemon({
      dataDir,
      config: hostConfig(dataDir, 'alpha', { kind: 'postgres', url, schema }),
    });
    const base = await waitServing(dataDir, daemon.pid, 30_000);
    const { id } = (await api(base, 'POST', '/tasks', { title: 'long', assignee: 'hang' })).body;
    const worker = await workerOf(base, id);
    const [alpha] = await waitFor('alpha to join', async () => {
      const list = await hostsOf(base);
      return list.length > 0 ? list : null;
    });

    const operator = await pool.connect();
    const answers: { status: number; ms: number; code?: string }[] = [];
    const renewals: number[] = [];
    let locked = true;
    try {
      await operator.query('BEGIN');
      await operator.query(`LOCK TABLE "${schema}".tasks IN ACCESS EXCLUSIVE MODE`);
      const lockedUntil = Date.now() + 20_000;
      // The hosts table is not locked: the test reads the lease the host keeps there.
      const watch = (async () => {
        while (Date.now() < lockedUntil) {
          const { rows } = await pool.query(
            `SELECT renewed_at FROM "${schema}".hosts WHERE id = $1`,
            [alpha.id],
          );
          renewals.push(Number(rows[0].renewed_at));
          await new Promise((r) => setTimeout(r, 250));
        }
      })();
      const reader = async (path: string) => {
        while (Date.now() < lockedUntil) {
          const sent = Date.now();
          const res = await api(base, 'GET', path);
          answers.push({ status: res.status, ms: Date.now() - sent, code: res.body?.error?.code });
        }
      };
      await Promise.all([
        watch,
        ...Array.from({ length: 16 }, (_, i) => reader(i % 2 ? '/tasks?limit=5' : `/tasks/${id}`)),
      ]);
      await operator.query('COMMIT');
      locked = false;
    } finally {
      if (locked) await operator.query('ROLLBACK').catch(() => undefined);
      operator.release();
    }
    // Renewed all along (every renewSeconds, never near the 10 s lease), and still this host's.
    const gaps = renewals.slice(1).map((at, i) => at - renewals[i]!);
    console.log(
      `LOCK TABLE 20 s: ${answers.length} reads (${answers.filter((a) => a.status === 503).length} answered 503), slowest ${Math.max(...answers.map((a) => a.ms))} ms; longest gap between renewals ${Math.max(...gaps)} ms`,
    );
    expect(Math.max(...gaps)).toBeLessThan(4000);
    expect((await hostsOf(base))[0]).toMatchObject({ id: alpha.id, state: 'active' });
    expect(pidExists(worker.pid, worker)).toBe(true);
    // Every read answered, 503 while the lock held it, each within seconds; none was a 500.
    expect(answers.length).toBeGreaterThan(16);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    expect(answers.some((a) => a.status === 503 && a.code === 'STORAGE_BUSY')).toBe(true);
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(8000);
    // The lock gone, the board serves again.
    expect((await api(base, 'GET', `/tasks/${id}`)).body.status).toBe('running');
    await api(base, 'POST', `/tasks/${id}/archive`);
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }, 90_000);
});
