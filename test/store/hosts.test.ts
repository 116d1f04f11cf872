// Hosts and their leases, with the real daemon: it registers and keeps its id across a restart,
// a frozen daemon's workers are ended by its run wrappers before its lease runs out, and a host
// that died is declared dead by another, its run lost and its task run there.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readProcStat } from '../../src/proc/proc-stat.js';
import { runCgroupBase } from '../../src/proc/cgroup.js';
import { currentBootId, pidExists, type ProcessIdentity } from '../../src/proc/index.js';
import { api } from '../helpers/app.js';
import { startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { testSchema } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

/** Short leases, so that a lost host is found in seconds: TERM about 6 s after the last renewal. */
const CLUSTER = { leaseSeconds: 10, renewSeconds: 1, reclaimGraceSeconds: 1 };

function hostConfig(dataDir: string, hostName: string, store?: object) {
  return writeConfig(dataDir, {
    ...(store ? { store } : {}),
    cluster: { ...CLUSTER, hostName },
    workers: {
      tickSeconds: 0.2,
      killGraceSeconds: 1,
      profiles: {
        done: profile('complete'),
        hang: profile('hang'),
        escape: profile('setsid-job'),
        vanish: profile('env-i-setsid-job'),
        forge: profile('forge-fence'),
      },
      defaultProfile: 'done',
    },
  });
}

async function hosts(base: string) {
  return (await api(base, 'GET', '/hosts')).body.hosts;
}

/** The identity of the task's first worker, once it has one. */
async function workerOf(base: string, taskId: string): Promise<ProcessIdentity> {
  const run = await waitFor('a worker', async () => {
    const [r] = (await api(base, 'GET', `/tasks/${taskId}`)).body.runs;
    return r?.pid > 0 ? r : null;
  });
  return { pid: run.pid, startTime: run.startTime, bootId: currentBootId() };
}

async function kinds(base: string, taskId: string | null = null): Promise<string[]> {
  const path = taskId === null ? '/events?limit=500' : `/tasks/${taskId}/events`;
  return (await api(base, 'GET', path)).body.events.map((e: { kind: string }) => e.kind);
}

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
        const list = await hosts(base);
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
      await waitFor('a renewal', async () => (await hosts(base))[0].renewedAt > host.renewedAt);
      expect((await kinds(base)).filter((k) => k === 'host_joined')).toHaveLength(1);

      first.child.kill('SIGTERM');
      await first.exited;
      const second = startDaemon({ dataDir, config });
      const again = await waitServing(dataDir, second.pid, 30_000);
      expect((await hosts(again)).map((h: { id: number }) => h.id)).toEqual([host.id]);
      expect((await kinds(again)).filter((k) => k === 'host_joined')).toHaveLength(1);
      second.child.kill('SIGTERM');
      await second.exited;
    },
    60_000,
  );
});

/** Milliseconds left on the (only) host's lease, by the database's clock. */
async function leaseLeft(pool: import('pg').Pool, schema: string): Promise<number> {
  const lease = await pool.query(
    `SELECT lease_expires_at - (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS left
      FROM "${schema}".hosts`,
  );
  return Number(lease.rows[0].left);
}

/** A pid's identity, read now. */
function identity(pid: number): ProcessIdentity {
  return { pid, startTime: readProcStat(pid)!.startTime, bootId: currentBootId() };
}

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
    const escapee = identity(
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
    const escapee = identity(pid);
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

describe('hosts sharing a board on PostgreSQL', () => {
  it("ends a frozen daemon's worker before its lease runs out, by its fence keeper alone", async () => {
    const { url, schema, pool } = testSchema();
    const dataDir = tempDir();
    const config = hostConfig(dataDir, 'alpha', { kind: 'postgres', url, schema });
    const daemon = startDaemon({ dataDir, config });
    const base = await waitServing(dataDir, daemon.pid, 30_000);
    const { id } = (await api(base, 'POST', '/tasks', { title: 'long', assignee: 'hang' })).body;
    const worker = await workerOf(base, id);
    expect(pidExists(worker.pid, worker)).toBe(true);

    daemon.child.kill('SIGSTOP');
    try {
      // The worker ignores TERM: the wrapper's KILL ends it, 2 s before the lease ends.
      await waitFor('the worker ended', () => !pidExists(worker.pid, worker), 20_000);
      const lease = await pool.query(
        `SELECT lease_expires_at - (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS left
          FROM "${schema}".hosts`,
      );
      expect(Number(lease.rows[0].left)).toBeGreaterThan(0);
    } finally {
      daemon.child.kill('SIGCONT');
    }
    // Back in time to renew, it sees its worker gone: the run ends, the task is not stuck.
    await waitFor('the run ended', async () => {
      const [r] = (await api(base, 'GET', `/tasks/${id}`)).body.runs;
      return r.endedAt !== null;
    });
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }, 60_000);

  it('declares a host dead once its lease and grace have run out; its run is lost, its task runs on another host', async () => {
    const { url, schema } = testSchema();
    const store = { kind: 'postgres', url, schema };
    const dirA = tempDir();
    const a = startDaemon({ dataDir: dirA, config: hostConfig(dirA, 'alpha', store) });
    const baseA = await waitServing(dirA, a.pid, 30_000);
    const { id } = (await api(baseA, 'POST', '/tasks', { title: 'long', assignee: 'hang' })).body;
    const worker = await workerOf(baseA, id);
    const [alpha] = await hosts(baseA);

    // The daemon dies; its worker goes on until the fence ends it.
    a.child.kill('SIGKILL');
    await a.exited;
    const dirB = tempDir();
    const b = startDaemon({ dataDir: dirB, config: hostConfig(dirB, 'beta', store) });
    const baseB = await waitServing(dirB, b.pid, 30_000);
    await waitFor(
      'alpha declared dead',
      async () =>
        (await hosts(baseB)).find((h: { id: number }) => h.id === alpha.id).state === 'dead',
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
      const list = await hosts(baseAgain);
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
      const list = await hosts(base);
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
    expect(Math.max(...gaps)).toBeLessThan(4000);
    expect((await hosts(base))[0]).toMatchObject({ id: alpha.id, state: 'active' });
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
