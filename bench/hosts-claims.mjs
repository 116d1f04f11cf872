// Claims across hosts on PostgreSQL, with real daemons (one process each, as on real hosts):
// how long a new ready task waits for a claim when the hosts are idle (woken by the creating
// host itself, or by another host through LISTEN/NOTIFY), against the same wait on SQLite; and
// task lifecycles per second with three hosts against one host on the same database, trivial
// workers, interleaved rounds. Both machines' worth of hosts share this machine's cores.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { startCluster } from '../scripts/pg-cluster.mjs';
import {
  envWithout,
  gatehouse,
  median,
  p99,
  printTable,
  removeDir,
  stopAll,
  tempDir,
  waitFor,
  waitServing,
} from './lib.mjs';

const TRIVIAL = ['/bin/sh', '-c', `printf '{"status":"done"}' > "$GATEHOUSE_RUN_DIR/result.json"`];
const WAITS = Number(process.env.GH_BENCH_WAITS ?? 150);
const TASKS = Number(process.env.GH_BENCH_TASKS ?? 400);
const ROUNDS = 2;

async function startHost(name, store, profiles) {
  const dataDir = tempDir();
  const config = join(dataDir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      store,
      cluster: { hostName: name },
      workers: {
        maxConcurrent: 8,
        profiles: Object.fromEntries(profiles.map((p) => [p, { command: TRIVIAL }])),
        defaultProfile: profiles[0],
      },
    }),
  );
  const proc = gatehouse(['run', '--data-dir', dataDir, '--port', '0', '--config', config], {
    env: envWithout('GATEHOUSE_'),
  });
  return { dataDir, proc, url: await waitServing(dataDir, proc.pid, 30_000) };
}

async function stopHosts(hosts) {
  for (const h of hosts) h.proc.kill('SIGTERM');
  await Promise.all(hosts.map((h) => h.proc.exited));
  for (const h of hosts) removeDir(h.dataDir);
}

const postTask = async (url, body) =>
  (
    await fetch(`${url}/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  ).json();

const get = async (url, path) => (await fetch(`${url}${path}`)).json();

/**
 * Creates tasks one at a time through `via`, each once the last is claimed (idle hosts), and
 * returns each one's wait from ready to claimed as the claim recorded it (ms).
 */
async function readyToClaimed(via, assignee, n) {
  const waits = [];
  for (let i = 0; i < n; i++) {
    const { id } = await postTask(via.url, { title: `wait ${i}`, assignee });
    const claimed = await waitFor(
      'the claim',
      async () =>
        (await get(via.url, `/tasks/${id}/events`)).events.find((e) => e.kind === 'claimed'),
      20_000,
      1,
    );
    waits.push(claimed.payload.waitedMs);
  }
  return waits;
}

/** The machine's CPU time so far, busy and all, in clock ticks (/proc/stat). */
function cpuTicks() {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const ticks = fields.map(Number);
  const idle = ticks[3] + ticks[4];
  const all = ticks.reduce((a, b) => a + b, 0);
  return { busy: all - idle, all };
}

/**
 * Task lifecycles per second: `TASKS` tasks created through the hosts in turn, all to done; and
 * how busy the machine's cores were meanwhile (a host cannot go faster on cores already busy).
 */
async function lifecycles(hosts) {
  const cpu0 = cpuTicks();
  const t0 = performance.now();
  for (let i = 0; i < TASKS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, TASKS - i) }, (_, j) =>
        postTask(hosts[(i + j) % hosts.length].url, { title: `life ${i + j}` }),
      ),
    );
  }
  await waitFor(
    'all done',
    async () => (await get(hosts[0].url, '/ready')).board.done === TASKS,
    300_000,
    20,
  );
  const rate = TASKS / ((performance.now() - t0) / 1000);
  const cpu1 = cpuTicks();
  lastBusy = (cpu1.busy - cpu0.busy) / (cpu1.all - cpu0.all);
  return rate;
}

let lastBusy = NaN;

export async function run() {
  const cluster = await startCluster();
  if (cluster.missing) throw new Error(cluster.missing);
  const postgres = () => ({
    kind: 'postgres',
    url: cluster.url,
    schema: `b_${randomBytes(4).toString('hex')}`,
  });
  try {
    // Waits: the creating host runs nothing of profile t, so another host must hear of it.
    const store = postgres();
    const creator = await startHost('creator', store, ['other']);
    const others = [await startHost('b', store, ['t']), await startHost('c', store, ['t'])];
    const remote = await readyToClaimed(creator, 't', WAITS);
    await stopHosts([creator, ...others]);
    const alone = await startHost('alone', postgres(), ['t']);
    const local = await readyToClaimed(alone, 't', WAITS);
    await stopHosts([alone]);
    const sqlite = await startHost('sqlite', { kind: 'sqlite' }, ['t']);
    const onSqlite = await readyToClaimed(sqlite, 't', WAITS);
    await stopHosts([sqlite]);

    const one = [];
    const three = [];
    const busyOne = [];
    const busyThree = [];
    for (let round = 0; round < ROUNDS; round++) {
      const single = [await startHost('solo', postgres(), ['t'])];
      one.push(await lifecycles(single));
      busyOne.push(lastBusy * 100);
      await stopHosts(single);
      const s = postgres();
      const trio = [];
      for (const name of ['x', 'y', 'z']) trio.push(await startHost(name, s, ['t']));
      three.push(await lifecycles(trio));
      busyThree.push(lastBusy * 100);
      await stopHosts(trio);
    }

    return printTable('Claims across hosts on PostgreSQL (real daemons on one machine)', [
      {
        figure: `ready → claimed by another idle host (LISTEN/NOTIFY), median of ${WAITS}`,
        unit: 'ms',
        value: median(remote),
        baselineName: 'SQLite, same host',
        baseline: median(onSqlite),
        goal: '<= 10 ms',
      },
      {
        figure: 'ready → claimed by another idle host, p99',
        unit: 'ms',
        value: p99(remote),
        baselineName: 'SQLite, same host',
        baseline: p99(onSqlite),
        goal: '<= 50 ms',
      },
      {
        figure: 'ready → claimed by the creating host itself, median',
        unit: 'ms',
        value: median(local),
        baselineName: 'SQLite, same host',
        baseline: median(onSqlite),
        goal: '-',
      },
      {
        figure: `task lifecycles per second, 3 hosts, trivial worker (${TASKS} tasks, median of ${ROUNDS})`,
        unit: 'tasks/s',
        value: median(three),
        baselineName: '1 host, same database',
        baseline: median(one),
        goal: '>= 2x',
      },
      {
        figure: `this machine's ${cpus().length} cores busy while 3 hosts ran them`,
        unit: '%',
        value: median(busyThree),
        baselineName: 'while 1 host did',
        baseline: median(busyOne),
        goal: '-',
      },
    ]);
  } finally {
    stopAll();
    cluster.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
