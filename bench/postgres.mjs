// The board on PostgreSQL, each figure beside its baseline in the same run: POST /tasks and
// GET /tasks/:id against bare Fastify + pg doing the same insert or select (32 connections,
// interleaved rounds), and task lifecycles per second on PostgreSQL against the same on SQLite.
// The cluster is a throwaway one (scripts/pg-cluster.mjs) with fsync on, as a real server.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { detailFloor, interleaved, startChild, startGatehouse } from './api.mjs';
import { lifecycles } from './dispatcher.mjs';
import { median, printTable, removeDir, stopAll, tempDir } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

/**
 * The statements the daemon sends for `n` lifecycles and the round trips it waits for, counted
 * at the driver (the lifecycles run in this process): a round trip is a statement sent while
 * its connection waited for no other answer; statements asked together share one.
 */
async function countedLifecycles(n, store) {
  const pg = createRequire(import.meta.url)('pg');
  const query = pg.Client.prototype.query;
  const pending = new WeakMap();
  let statements = 0;
  let trips = 0;
  pg.Client.prototype.query = function (config, ...rest) {
    statements++;
    const waiting = pending.get(this) ?? 0;
    if (waiting === 0) trips++;
    pending.set(this, waiting + 1);
    let answered = false;
    const done = () => {
      if (answered) return;
      answered = true;
      pending.set(this, pending.get(this) - 1);
    };
    const last = rest.length - 1;
    if (last >= 0 && typeof rest[last] === 'function') {
      const callback = rest[last];
      rest[last] = (...args) => (done(), callback(...args));
    } else if (typeof config?.callback === 'function') {
      const callback = config.callback;
      config.callback = (...args) => (done(), callback(...args));
    }
    const answer = query.call(this, config, ...rest);
    answer?.then?.(done, done);
    return answer;
  };
  try {
    await lifecycles(n, 8, store);
  } finally {
    pg.Client.prototype.query = query;
  }
  return { statements: statements / n, trips: trips / n };
}

export async function run() {
  const cluster = await startCluster({ durable: true });
  if (cluster.missing) throw new Error(cluster.missing);
  const schema = () => `bench_${randomBytes(4).toString('hex')}`;
  const postgres = () => ({ kind: 'postgres', url: cluster.url, schema: schema(), poolSize: 10 });
  const dirs = [tempDir()];
  try {
    const board = postgres();
    const gh = await startGatehouse(dirs[0], { maxConcurrent: 0 }, board);
    const bare = await startChild('bench/bare-pg-server.mjs', [cluster.url, schema(), '10']);
    const loads = await interleaved({ gh: gh.url, bare: bare.url });
    bare.proc.kill('SIGTERM');
    const detail = await detailFloor(gh.url, [cluster.url, board.schema]);
    gh.proc.kill('SIGTERM');
    const avg = (results) => results.reduce((sum, r) => sum + r.requests.average, 0) / ROUNDS;

    const N = Number(process.env.BENCH_TASKS ?? 200);
    const onPg = [];
    const onSqlite = [];
    for (let round = 0; round < 3; round++) {
      onSqlite.push(await lifecycles(N, 8));
      onPg.push(await lifecycles(N, 8, postgres()));
    }
    const mid = (results, key) => median(results.map((r) => r[key]));
    /** The machine's CPU per lifecycle that is neither the daemon's nor its runs'. */
    const rest = (results) => median(results.map((r) => r.machineCpu - r.daemonCpu - r.runsCpu));
    const serverCpu = Math.max(0, rest(onPg) - rest(onSqlite));
    const counted = await countedLifecycles(N, postgres());
    return printTable('The board on PostgreSQL (32 connections, pool of 10, fsync on)', [
      {
        figure: 'POST /tasks on PostgreSQL',
        unit: 'req/s',
        value: avg(loads.gh.post),
        baselineName: 'bare fastify + pg insert',
        baseline: avg(loads.bare.post),
        goal: '>= 0.5x',
      },
      {
        figure: 'GET /tasks/:id on PostgreSQL',
        unit: 'req/s',
        value: avg(loads.gh.get),
        baselineName: 'bare fastify + pg select by key',
        baseline: avg(loads.bare.get),
        goal: '>= 0.6x',
      },
      {
        figure: `GET /tasks/:id on PostgreSQL, a task's whole detail (${detail.bytes.gh} bytes), in turn with its floor`,
        unit: 'req/s',
        value: avg(detail.gh),
        baselineName: `the floor: bare fastify, the same detail by the board's own read (${detail.bytes.floor} bytes)`,
        baseline: avg(detail.floor),
        goal: '-',
      },
      {
        figure: `task lifecycles on PostgreSQL, trivial worker, 8 at a time (${N} tasks, median of 3 interleaved)`,
        unit: 'tasks/s',
        value: mid(onPg, 'rate'),
        baselineName: 'the same on SQLite',
        baseline: mid(onSqlite, 'rate'),
        goal: '>= 0.8x',
      },
      {
        figure: `the whole machine's CPU per lifecycle on PostgreSQL, median (the daemon ${mid(onPg, 'daemonCpu').toFixed(2)} ms, the runs ${mid(onPg, 'runsCpu').toFixed(2)} ms, the rest: the database server, the machine)`,
        unit: 'ms',
        value: mid(onPg, 'machineCpu'),
        baselineName: `the same on SQLite (the daemon ${mid(onSqlite, 'daemonCpu').toFixed(2)} ms, the runs ${mid(onSqlite, 'runsCpu').toFixed(2)} ms)`,
        baseline: mid(onSqlite, 'machineCpu'),
        goal: '-',
      },
      {
        // The machine's two cores bound both rates: were the daemon's own work on PostgreSQL
        // free (no more than on SQLite), the database server's CPU alone would still be added to
        // each lifecycle. The rest above, less SQLite's rest, is that server's share.
        figure: `the ceiling on this machine: SQLite's whole CPU per lifecycle, against it plus the database server's (${serverCpu.toFixed(2)} ms: the rest above, less SQLite's)`,
        unit: 'ms',
        value: mid(onSqlite, 'machineCpu'),
        baselineName: "SQLite's, plus the database server's",
        baseline: mid(onSqlite, 'machineCpu') + serverCpu,
        goal: '-',
      },
      {
        figure: `round trips a lifecycle waits for, counted at the driver (${N} tasks, creation included)`,
        unit: 'per lifecycle',
        value: counted.trips,
        baselineName: 'statements it sends',
        baseline: counted.statements,
        goal: '-',
      },
    ]);
  } finally {
    stopAll();
    for (const dir of dirs) removeDir(dir);
    cluster.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
