// One daemon as a host of a PostgreSQL (or SQLite) board with short leases, and what the host
// and fence tests read of it: its hosts, its worker, its events, the lease left, a pid's identity.
import type pg from 'pg';
import { currentBootId, type ProcessIdentity } from '../../src/proc/index.js';
import { readProcStat } from '../../src/proc/proc-stat.js';
import { expect } from 'vitest';
import { api } from './app.js';
import { SHORT_LEASES } from './hosts.js';
import { startDaemon, tempDir, waitServing, writeConfig } from './daemon.js';
import { testSchema } from './postgres.js';
import { waitFor } from './wait.js';
import { profile } from './workers.js';

/** Short leases, so that a lost host is found in seconds: TERM about 6 s after the last renewal. */
export const CLUSTER = SHORT_LEASES;

export function hostConfig(dataDir: string, hostName: string, store?: object) {
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
        keep: profile('setsid-job', { keepDescendants: true }),
        forge: profile('forge-fence'),
      },
      defaultProfile: 'done',
    },
  });
}

export async function hostsOf(base: string) {
  return (await api(base, 'GET', '/hosts')).body.hosts;
}

/** The identity of the task's first worker, once it has one. */
export async function workerOf(base: string, taskId: string): Promise<ProcessIdentity> {
  const run = await waitFor('a worker', async () => {
    const [r] = (await api(base, 'GET', `/tasks/${taskId}`)).body.runs;
    return r?.pid > 0 ? r : null;
  });
  return { pid: run.pid, startTime: run.startTime, bootId: currentBootId() };
}

export async function kinds(base: string, taskId: string | null = null): Promise<string[]> {
  const path = taskId === null ? '/events?limit=500' : `/tasks/${taskId}/events`;
  return (await api(base, 'GET', path)).body.events.map((e: { kind: string }) => e.kind);
}

/** Milliseconds left on the (only) host's lease, by the database's clock. */
export async function leaseLeft(pool: pg.Pool, schema: string): Promise<number> {
  const lease = await pool.query(
    `SELECT lease_expires_at - (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS left
      FROM "${schema}".hosts`,
  );
  return Number(lease.rows[0].left);
}

/** A pid's identity, read now. */
export function identityNow(pid: number): ProcessIdentity {
  return { pid, startTime: readProcStat(pid)!.startTime, bootId: currentBootId() };
}

/** Host alpha's daemon on a fresh PostgreSQL schema, with a task of `assignee` whose worker runs. */
export async function hostRunning(assignee: string, env?: NodeJS.ProcessEnv) {
  const { url, schema, pool } = testSchema();
  const dataDir = tempDir();
  const config = hostConfig(dataDir, 'alpha', { kind: 'postgres', url, schema });
  const daemon = startDaemon({ dataDir, config, ...(env ? { env } : {}) });
  const base = await waitServing(dataDir, daemon.pid, 30_000);
  // One run only: a run the fence ends is a counted failure, and the task then gives up rather
  // than run again (a second run's escapees would outlive the test).
  const { id } = (await api(base, 'POST', '/tasks', { title: assignee, assignee, maxRetries: 1 }))
    .body;
  const worker = await workerOf(base, id);
  const [run] = (await api(base, 'GET', `/tasks/${id}`)).body.runs;
  return {
    pool,
    schema,
    dataDir,
    daemon,
    base,
    taskId: id as string,
    runId: run.id as string,
    worker,
    /** SIGTERM, and waits for its exit. */
    stop: async () => {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    },
  };
}

export type RunningHost = Awaited<ReturnType<typeof hostRunning>>;

/**
 * With its daemon frozen: `during`, then `ended` must come true before the host's lease runs out
 * (by the database's clock), by the fence alone.
 */
export async function endedWhileFrozen(
  host: RunningHost,
  ended: () => boolean,
  during: () => unknown = () => undefined,
): Promise<void> {
  host.daemon.child.kill('SIGSTOP');
  try {
    await during();
    await waitFor('ended at the fence', ended, 20_000);
    expect(await leaseLeft(host.pool, host.schema)).toBeGreaterThan(0);
  } finally {
    host.daemon.child.kill('SIGCONT');
  }
}
