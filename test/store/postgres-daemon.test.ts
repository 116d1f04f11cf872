// The real daemon on PostgreSQL: configured by its config file and GATEHOUSE_DATABASE_URL, a
// task to done, a worker adopted across a restart, and the errors an operator meets at start.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { freePort, startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { databaseUrl, testSchema } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

function postgresConfig(
  dataDir: string,
  schema: string,
  url = 'postgres://unused@127.0.0.1:1/x',
  more: object = {},
) {
  return writeConfig(dataDir, {
    ...more,
    store: { kind: 'postgres', url, schema, poolSize: 4 },
    workers: {
      tickSeconds: 0.2,
      profiles: { done: profile('complete'), hang: profile('hang') },
      defaultProfile: 'done',
    },
  });
}

/** Forwards connections on 127.0.0.1:`from` to `to`: the database "comes up" when it starts. */
async function tcpProxy(from: number, to: number): Promise<{ close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(to, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(from, '127.0.0.1', resolve));
  return {
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function task(url: string, id: string) {
  return (await api(url, 'GET', `/tasks/${id}`)).body;
}

/**
 * The local TCP ports of process `pid`'s sockets: its connections, told apart from the other test
 * files' on the same cluster (by their client_port in pg_stat_activity).
 */
function tcpPortsOf(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket) inodes.add(socket[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6'])
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length > 9 && inodes.has(fields[9]!))
        ports.push(Number.parseInt(fields[1]!.split(':')[1]!, 16));
    }
  return ports;
}

describe('the daemon on PostgreSQL', () => {
  it('runs tasks on the schema its config names, with the URL from GATEHOUSE_DATABASE_URL, and adopts its worker across a restart', async () => {
    const { schema, url, pool } = testSchema();
    const dataDir = tempDir();
    // The file's URL is a placeholder: the environment's wins (a password stays out of files).
    const config = postgresConfig(dataDir, schema);
    const env = { GATEHOUSE_DATABASE_URL: url };
    const first = startDaemon({ dataDir, config, env });
    const base = await waitServing(dataDir, first.pid, 30_000);
    const done = (await api(base, 'POST', '/tasks', { title: 'on postgres' })).body;
    const hang = (await api(base, 'POST', '/tasks', { title: 'long', assignee: 'hang' })).body;
    await waitFor('done', async () => (await task(base, done.id)).status === 'done');
    await waitFor('running', async () => (await task(base, hang.id)).runs[0]?.pid > 0);
    const rows = await pool.query(`SELECT status FROM "${schema}".tasks WHERE id = $1`, [done.id]);
    expect(rows.rows[0].status).toBe('done');

    first.child.kill('SIGTERM');
    await first.exited;
    const second = startDaemon({ dataDir, config, env });
    const again = await waitServing(dataDir, second.pid, 30_000);
    expect((await task(again, done.id)).status).toBe('done');
    const events = async () =>
      (await api(again, 'GET', `/tasks/${hang.id}/events`)).body.events.map(
        (e: { kind: string }) => e.kind,
      );
    await waitFor('adopted', async () => (await events()).includes('adopted'));
    expect((await task(again, hang.id)).status).toBe('running');
    await api(again, 'POST', `/tasks/${hang.id}/archive`);
    expect((await task(again, hang.id)).status).toBe('archived');
    second.child.kill('SIGTERM');
    await second.exited;
  });

  it('waits while a daemon of an older version serves the board alone, and keeps such a daemon standing by while it serves', async () => {
    const { schema, url, pool } = testSchema();
    // What an older daemon held while it served: the schema's board lock, exclusive.
    const older = await pool.connect();
    const key = "hashtext('gatehouse.board'), hashtext($1)";
    try {
      const taken = await older.query(`SELECT pg_try_advisory_lock(${key}) AS held`, [schema]);
      expect(taken.rows[0].held).toBe(true);
      const dataDir = tempDir();
      const port = await freePort();
      const daemon = startDaemon({ dataDir, port, config: postgresConfig(dataDir, schema, url) });
      const base = `http://127.0.0.1:${port}`;
      const waiting = await waitFor('the port answers', async () => {
        const res = await api(base, 'GET', '/ready').catch(() => null);
        return res?.body?.subsystems?.database?.detail ? res : null;
      });
      expect(waiting.status).toBe(503);
      expect(waiting.body.subsystems.database.detail).toContain('older version');
      expect((await api(base, 'POST', '/tasks', { title: 'too early' })).status).toBe(503);

      await older.query(`SELECT pg_advisory_unlock(${key})`, [schema]);
      await waitFor('ready', async () => (await api(base, 'GET', '/ready')).status === 200, 30_000);
      // An older daemon starting now finds the lock held and stands by.
      const again = await older.query(`SELECT pg_try_advisory_lock(${key}) AS held`, [schema]);
      expect(again.rows[0].held).toBe(false);
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toMatchObject({ code: 0 });
    } finally {
      older.release();
    }
  });

  it('exits 78 naming what to fix when the database does not exist', async () => {
    const { schema } = testSchema();
    const dataDir = tempDir();
    const missing = new URL(databaseUrl());
    missing.pathname = '/no_such_database';
    const daemon = startDaemon({
      dataDir,
      config: postgresConfig(dataDir, schema, missing.toString()),
    });
    expect(await daemon.exited).toMatchObject({ code: 78 });
    expect(daemon.output()).toMatch(/no_such_database.*the database does not exist \(3D000\)/s);
  });

  it('waits for a database that is not up yet with its port answering: /ready says why, routes say 503, then it serves', async () => {
    const { schema, url } = testSchema();
    const dataDir = tempDir();
    // The database's address: nothing listens there until the proxy to the real one starts.
    const dbPort = await freePort();
    const late = new URL(url);
    late.port = String(dbPort);
    const port = await freePort();
    const daemon = startDaemon({
      dataDir,
      port,
      config: postgresConfig(dataDir, schema, late.toString()),
    });
    const base = `http://127.0.0.1:${port}`;
    await waitFor('the retry said', () => /unreachable.*trying again in 1 s/.test(daemon.output()));
    const ready = await waitFor(
      'the port answers',
      async () => (await api(base, 'GET', '/ready').catch(() => null)) ?? undefined,
    );
    expect(ready.status).toBe(503);
    expect(ready.body.ready).toBe(false);
    expect(ready.body.subsystems.database.detail).toMatch(/unreachable.*trying again/);
    expect(ready.body.error.code).toBe('NOT_READY');
    expect(ready.body.error.message).toMatch(/^not ready: database is down: .*unreachable/);
    expect((await api(base, 'GET', '/health')).status).toBe(200);
    const refused = await api(base, 'POST', '/tasks', { title: 'too early' });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('STORAGE_UNAVAILABLE');

    const proxy = await tcpProxy(dbPort, Number(new URL(url).port));
    try {
      await waitFor('ready', async () => (await api(base, 'GET', '/ready')).status === 200, 30_000);
      const created = await api(base, 'POST', '/tasks', { title: 'once it is up' });
      expect(created.status).toBe(201);
      await waitFor('done', async () => (await task(base, created.body.id)).status === 'done');
      // Nothing asked for before the database was up was written.
      const titles = (await api(base, 'GET', '/tasks')).body.tasks.map(
        (t: { title: string }) => t.title,
      );
      expect(titles).toEqual(['once it is up']);
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toMatchObject({ code: 0 });
    } finally {
      await proxy.close();
    }
  });

  it('answers 503 while its connections are cut, never 500, keeps every answered task, and serves again by itself', async () => {
    const { schema, url, pool } = testSchema();
    const dataDir = tempDir();
    const daemon = startDaemon({ dataDir, config: postgresConfig(dataDir, schema, url) });
    const base = await waitServing(dataDir, daemon.pid, 30_000);
    // Serving, and started: its dispatcher has adopted what was running. (A connection cut
    // while it still starts ends the daemon with an error: found here, not this test's case.)
    await waitFor('ready', async () => (await api(base, 'GET', '/ready')).status === 200, 30_000);
    const answered: string[] = [];
    const statuses = new Map<string, number>();
    // This daemon's connections only: other test files share the cluster, and cutting theirs
    // failed them (a board copy's store, opening as this cut came).
    let cutOff = 0;
    const terminate = async () => {
      const { rows } = await pool.query(
        "SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE application_name = 'gatehouse' AND client_port = ANY($1::int[])",
        [tcpPortsOf(daemon.pid)],
      );
      cutOff += rows.filter((r: { cut: boolean }) => r.cut).length;
    };
    // A request whose connection was reset got no answer at all (neither a 503 nor a 500): the
    // client sends it again, as any would, with an Idempotency-Key so that a POST the daemon
    // did handle is answered as the first, never made twice. Seen under a full suite's load.
    let resets = 0;
    let sent = 0;
    const send = async (method: string, path: string, body?: object) => {
      const headers = method === 'POST' ? { 'idempotency-key': `cut-${++sent}` } : undefined;
      for (let attempt = 1; ; attempt++) {
        try {
          return await api(base, method, path, body, headers);
        } catch (err) {
          const code = ((err as Error).cause as { code?: string } | undefined)?.code;
          if (attempt === 3 || (code !== 'ECONNRESET' && code !== 'EPIPE')) throw err;
          resets++;
        }
      }
    };
    const requests = async () => {
      const [created, read] = await Promise.all([
        send('POST', '/tasks', { title: 'through the cuts', assignee: 'hang' }),
        send('GET', '/tasks?limit=5'),
      ]);
      for (const res of [created, read]) {
        const key = `${res.status} ${res.body?.error?.code ?? ''}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
      if (created.status === 201) answered.push(created.body.id);
    };
    try {
      for (let cut = 0; cut < 5; cut++) {
        // Each cut lands while requests are in flight; the next requests meet the broken pool.
        await Promise.all([requests(), terminate()]);
        await requests();
      }
    } catch (err) {
      // A connection reset here once (not reproduced since): keep what the daemon said.
      // Whether it still ran (a refused connection: it did not), and its last lines of any level.
      const { exitCode, signalCode } = daemon.child;
      throw new Error(
        `${(err as Error).message}; the daemon ${exitCode === null && signalCode === null ? 'still runs' : `ended (code ${exitCode}, signal ${signalCode})`} and said: ${daemon
          .output()
          .split('\n')
          .slice(-30)
          .join('\n')
          .slice(-6000)}`,
        {
          cause: err,
        },
      );
    }
    if (resets > 0) console.log(`connections reset and sent again: ${resets}`);
    expect(cutOff).toBeGreaterThan(0);
    // Every answer was a success or a clear 503, and the daemon lived through it.
    for (const key of statuses.keys())
      expect(key).toMatch(/^(200|201) $|^503 STORAGE_UNAVAILABLE$/);
    expect(daemon.child.exitCode).toBeNull();
    await waitFor(
      'serving again',
      async () =>
        (await api(base, 'POST', '/tasks', { title: 'after', assignee: 'hang' })).status === 201,
    );
    for (const id of answered) expect((await task(base, id)).id).toBe(id);
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  });
});
