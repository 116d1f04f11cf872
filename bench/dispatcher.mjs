// The dispatcher's speed: exit → event latency, task lifecycles per second against a native
// spawner (xargs -P) running the same worker, bare and under the run wrapper (the floor of a
// run's process structure), interleaved, one tick's cost with 1,000 adopted workers, and the
// wrapper's memory. Trivial workers' figures carry no goal: users' workers last minutes, and a
// speed change lands only with a gain at that scale (docs/benchmarks.md).
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { WRAPPER } from '../dist/kanban/dispatch/worker-spawn.js';
import {
  dispatchingGateway,
  median,
  p99,
  printTable,
  removeDir,
  tempDir,
  waitFor,
} from './lib.mjs';

const TRIVIAL = ['/bin/sh', '-c', `printf '{"status":"done"}' > "$GATEHOUSE_RUN_DIR/result.json"`];
const STAMPED = [
  process.execPath,
  '-e',
  `require('fs').writeFileSync(process.env.GATEHOUSE_RUN_DIR + '/result.json', JSON.stringify({status:'done', summary: String(Date.now())}))`,
];

function gateway(dataDir, workers, board = { kind: 'sqlite' }) {
  return dispatchingGateway(dataDir, { store: board, workers: { tickSeconds: 1, ...workers } });
}

async function settledCount(gw) {
  const c = await gw.kanban.board.counts();
  return c.done + c.blocked;
}

/** Exit → completed event: the worker stamps the time it exits; the event has its own time. */
async function exitLatency(n) {
  const dir = tempDir();
  const gw = await gateway(dir, { maxConcurrent: 1, profiles: { stamp: { command: STAMPED } } });
  const latencies = [];
  for (let i = 0; i < n; i++) {
    const task = await gw.kanban.board.create(
      { title: `latency ${i}`, assignee: 'stamp' },
      { kind: 'api' },
    );
    const event = await waitFor(
      'completed',
      async () =>
        (await gw.kanban.board.events.listForTask(task.id, 0, 100)).find(
          (e) => e.kind === 'completed',
        ),
      10_000,
      1,
    );
    latencies.push(event.at - Number(event.payload.summary));
  }
  await gw.close();
  removeDir(dir);
  return latencies;
}

/** The same: a bare child's exit event, stamped the same way. */
async function bareExitLatency(n) {
  const latencies = [];
  for (let i = 0; i < n; i++) {
    const child = spawn(process.execPath, ['-e', 'process.stdout.write(String(Date.now()))'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    await new Promise((r) => child.on('close', r));
    latencies.push(Date.now() - Number(out));
  }
  return latencies;
}

/** CPU ms used by the processes this one has waited for (and theirs, recursively). */
function childrenCpuMs() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  // cutime and cstime are fields 16 and 17 of the line, in USER_HZ ticks (100 a second on Linux).
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/**
 * CPU ms the whole machine has been busy (every process: this one, its runs, a database server),
 * from /proc/stat, in USER_HZ ticks (100 a second on Linux).
 */
function machineBusyMs() {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1);
  // user, nice, system, (idle, iowait), irq, softirq, steal
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
  return (user + nice + system + irq + softirq + steal) * 10;
}

/**
 * Tasks per second, and CPU ms per task: the daemon's own (this process), its runs', and the
 * whole machine's (a database server's included).
 */
export async function lifecycles(n, concurrency, store = { kind: 'sqlite' }, root = undefined) {
  const dir = tempDir(root);
  const gw = await gateway(
    dir,
    {
      maxConcurrent: concurrency,
      profiles: { t: { command: TRIVIAL, maxConcurrent: concurrency } },
    },
    store,
  );
  const cpu0 = process.cpuUsage();
  const children0 = childrenCpuMs();
  const machine0 = machineBusyMs();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      gw.kanban.board.create({ title: `life ${i}`, assignee: 't' }, { kind: 'api' }),
    ),
  );
  // Told by the board's own events, not polled: a count is a query in the daemon's process, and
  // polling it every 10 ms cost 0.7 ms of the daemon's CPU per lifecycle. The count, checked
  // every 500 ms, catches an ending told otherwise.
  let ended = 0;
  let allEnded;
  const told = new Promise((resolve) => (allEnded = resolve));
  const unsubscribe = gw.kanban.board.bus.subscribe((e) => {
    if ((e.kind === 'completed' || e.kind === 'blocked') && ++ended >= n) allEnded();
  });
  let done = false;
  await Promise.race([
    told,
    waitFor('all done', async () => done || (await settledCount(gw)) === n, 120_000, 500),
  ]);
  done = true;
  unsubscribe();
  const rate = n / ((performance.now() - t0) / 1000);
  const cpu = process.cpuUsage(cpu0);
  const runsCpu = (childrenCpuMs() - children0) / n;
  const machineCpu = (machineBusyMs() - machine0) / n;
  await gw.close();
  removeDir(dir);
  return { rate, daemonCpu: (cpu.user + cpu.system) / 1000 / n, runsCpu, machineCpu };
}

/**
 * The daemon's CPU (this process's) for what a lifecycle asks of the disk, `n` times, in the same
 * temp dir as the lifecycles: a run's folder and the three files the daemon writes in it
 * (task.json, proc.json, the log), and the four commits of a lifecycle (its creation, claim,
 * spawn and settlement), each synced as the board's are (WAL, synchronous=FULL). The kernel's
 * inode allocation is most of it, and it depends on the disk: an ext4 without a journal checks
 * every free inode it finds against recent deletions. Made right after a round of lifecycles,
 * whose folders were just deleted: as a daemon's would be after retention's batch.
 */
function diskFloor(n) {
  const dir = tempDir();
  const task = JSON.stringify({ id: 't_000000000000', title: 'life 0', pad: 'x'.repeat(500) });
  const db = new Database(join(dir, 'board.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const run = join(dir, `r_${String(i).padStart(12, '0')}`);
      mkdirSync(run);
      writeFileSync(join(run, 'task.json'), task);
      closeSync(openSync(join(run, 'log'), 'a'));
      writeFileSync(join(run, 'proc.json'), '{"pid":1234567,"pgid":1234567,"startTime":12345678}');
      for (let c = 0; c < 4; c++) insert.run(task);
    }
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / 1000 / n;
  } finally {
    db.close();
    removeDir(dir);
  }
}

/**
 * The same worker, forked and exec'd `n` times, `concurrency` at a time, by xargs; `wrapped`
 * runs each under gatehouse's wrapper (libexec/run-worker.sh) with its own exit.json, as the
 * dispatcher does: the process structure of a run, with nothing of the daemon's bookkeeping.
 */
async function nativeSpawns(n, concurrency, wrapped = false) {
  const dir = tempDir();
  const ids = Array.from({ length: n }, (_, i) => String(i));
  if (wrapped) for (const id of ids) mkdirSync(join(dir, id));
  const argv = wrapped
    ? ['-I{}', '/bin/sh', WRAPPER, join(dir, '{}', 'exit.json'), ...TRIVIAL]
    : ['-n', '1', ...TRIVIAL];
  const children0 = childrenCpuMs();
  const t0 = performance.now();
  const xargs = spawn('xargs', ['-P', String(concurrency), ...argv], {
    env: { ...process.env, GATEHOUSE_RUN_DIR: dir },
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  xargs.stdin.end(ids.join('\n'));
  await new Promise((r) => xargs.on('exit', r));
  const rate = n / ((performance.now() - t0) / 1000);
  const cpu = (childrenCpuMs() - children0) / n;
  removeDir(dir);
  return { rate, cpu };
}

function pss(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Pss:'));
    return Number(line.trim().split(/\s+/)[1]) * 1024;
  } catch {
    return NaN;
  }
}

function rss(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line.trim().split(/\s+/)[1]) * 1024;
}

/** 1,000 live workers, adopted by a second gateway; the cost of its ticks against an empty tick. */
async function adoptedTick(n) {
  const dir = tempDir();
  const sleeper = { command: ['/bin/sleep', '600'] };
  const first = await gateway(dir, {
    maxConcurrent: n,
    profiles: { s: { ...sleeper, maxConcurrent: n } },
  });
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      first.kanban.board.create({ title: `adopt ${i}`, assignee: 's' }, { kind: 'api' }),
    ),
  );
  await waitFor('all running', () => first.dispatcher.liveCount() === n, 120_000, 20);
  const leaders = [];
  for (const t of await first.kanban.board.tasks.running())
    leaders.push((await first.kanban.board.runs.get(t.currentRunId)).pid);
  const wrapperRss = leaders.slice(0, 50).map(rss);
  const wrapperPss = leaders.slice(0, 50).map(pss);
  const nodeBaseline = spawn(process.execPath, ['-e', 'setInterval(()=>{},1e3)'], {
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, 300));
  const nodeRss = rss(nodeBaseline.pid);
  nodeBaseline.kill('SIGKILL');
  await first.close();

  const second = await gateway(dir, {
    maxConcurrent: n,
    profiles: { s: { ...sleeper, maxConcurrent: n } },
  });
  await waitFor('adopted', () => second.dispatcher.liveCount() === n, 30_000);
  const ticks = [];
  for (let i = 0; i < 10; i++) {
    const t0 = performance.now();
    await second.dispatcher.tick();
    ticks.push(performance.now() - t0);
  }
  // End the sleepers through the board, as an operator would.
  for (const t of await second.kanban.board.tasks.running())
    await second.kanban.operator.archive(t.id);
  await second.close();

  const empty = tempDir();
  const idle = await gateway(empty, {});
  const idleTicks = [];
  for (let i = 0; i < 10; i++) {
    const t0 = performance.now();
    await idle.dispatcher.tick();
    idleTicks.push(performance.now() - t0);
  }
  await idle.close();
  removeDir(dir);
  removeDir(empty);
  return { ticks, idleTicks, wrapperRss, wrapperPss, nodeRss };
}

export async function run() {
  const N = Number(process.env.BENCH_TASKS ?? 200);
  const own = await exitLatency(50);
  const bare = await bareExitLatency(50);
  const life = [];
  const native = [];
  const wrapped = [];
  const folders = [];
  // The same lifecycles with the data dir in memory: what the daemon costs without this
  // machine's disk under its run folders (whose files docs/operations.md names, so they are not optional).
  const shm = existsSync('/dev/shm') ? '/dev/shm' : null;
  const inMemory = [];
  // A daemon runs for days: one round unmeasured first, so that what is measured is its steady
  // state, not V8 compiling the dispatcher's code while it runs.
  await lifecycles(N, 8);
  for (let round = 0; round < 3; round++) {
    native.push(await nativeSpawns(N, 8));
    wrapped.push(await nativeSpawns(N, 8, true));
    life.push(await lifecycles(N, 8));
    folders.push(diskFloor(N));
    if (shm) inMemory.push(await lifecycles(N, 8, undefined, shm));
  }
  const adopt = await adoptedTick(Number(process.env.BENCH_ADOPTED ?? 1000));
  const mib = (b) => b / 1024 / 1024;
  return printTable('Dispatcher', [
    {
      figure: `worker exit → task event, median (p99 ${p99(own).toFixed(0)} ms; hermes-agent polls every 60 s)`,
      unit: 'ms',
      value: median(own),
      baselineName: `bare child exit event (p99 ${p99(bare).toFixed(0)} ms)`,
      baseline: Math.max(median(bare), 0.5),
    },
    {
      figure: `task lifecycles, trivial worker, 8 at a time (${N} tasks, median of 3 interleaved)`,
      unit: 'tasks/s',
      value: median(life.map((l) => l.rate)),
      baselineName: 'the same worker run by xargs -P 8',
      baseline: median(native.map((x) => x.rate)),
      goal: '-',
    },
    {
      figure: `the floor: the same worker under the run wrapper, run by xargs -P 8 (${N} tasks)`,
      unit: 'tasks/s',
      value: median(wrapped.map((x) => x.rate)),
      baselineName: 'the same worker run by xargs -P 8',
      baseline: median(native.map((x) => x.rate)),
    },
    {
      figure: "CPU per lifecycle: the run's processes (wrapper and worker), median",
      unit: 'ms',
      value: median(life.map((l) => l.runsCpu)),
      baselineName: 'CPU per task, the worker run by xargs',
      baseline: median(native.map((x) => x.cpu)),
    },
    {
      figure:
        "CPU per lifecycle: the daemon's own (claim, files, spawn, leftover check, settle), median",
      unit: 'ms',
      value: median(life.map((l) => l.daemonCpu)),
      baselineName: 'CPU per task, the worker run by xargs',
      baseline: median(native.map((x) => x.cpu)),
      goal: '-',
    },
    {
      figure:
        "the floor on this disk: a run's folder and its three files, and four synced commits, the daemon's CPU, median",
      unit: 'ms',
      value: median(folders),
      baselineName: "CPU per lifecycle, the daemon's own",
      baseline: median(life.map((l) => l.daemonCpu)),
    },
    ...(shm
      ? [
          {
            figure: `task lifecycles, the data dir on tmpfs (${shm}, no disk under the run folders), median of 3`,
            unit: 'tasks/s',
            value: median(inMemory.map((l) => l.rate)),
            baselineName: 'the same worker run by xargs -P 8',
            baseline: median(native.map((x) => x.rate)),
            goal: '-',
          },
          {
            figure: "CPU per lifecycle: the daemon's own, the data dir on tmpfs, median",
            unit: 'ms',
            value: median(inMemory.map((l) => l.daemonCpu)),
            baselineName: 'CPU per task, the worker run by xargs',
            baseline: median(native.map((x) => x.cpu)),
            goal: '-',
          },
        ]
      : []),
    {
      figure: `dispatcher tick with 1,000 adopted workers, median (p99 ${p99(adopt.ticks).toFixed(1)} ms)`,
      unit: 'ms',
      value: median(adopt.ticks),
      baselineName: 'tick with no workers',
      baseline: median(adopt.idleTicks),
      goal: '<= 20 ms',
    },
    {
      figure: 'wrapper (sh) memory per worker, PSS median',
      unit: 'MiB',
      value: mib(median(adopt.wrapperPss)),
      baselineName: 'an idle node process RSS',
      baseline: mib(adopt.nodeRss),
    },
    {
      figure: 'wrapper (sh) memory per worker, RSS median',
      unit: 'MiB',
      value: mib(median(adopt.wrapperRss)),
      baselineName: 'an idle node process RSS',
      baseline: mib(adopt.nodeRss),
    },
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
