// Starting a worker: what it costs the daemon's process to start the run's wrapper with
// gatehouse's process starter (posix_spawn, src/proc/start-process.ts) beside Node's
// child_process (a fork), in one process holding a daemon's worth of memory (a fork copies its
// page tables, so its cost grows with it), interleaved; each start waited for to its end.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { startProcess } from '../dist/proc/index.js';
import { median, printTable } from './lib.mjs';

const N = Number(process.env.BENCH_STARTS ?? 200);
const ROUNDS = 3;
const ARGS = ['-c', 'exit 0'];
const ENV = { PATH: '/usr/bin:/bin' };

async function viaChildProcess(fd) {
  const c = spawn('/bin/sh', ARGS, { env: ENV, detached: true, stdio: ['ignore', fd, fd] });
  await new Promise((resolve) => c.once('exit', resolve));
}

async function viaStarter(fd) {
  const p = await startProcess({ file: '/bin/sh', args: ARGS, env: ENV, cwd: '/', output: fd });
  await new Promise((resolve) => p.onExit(resolve));
}

/** The daemon's CPU (user + system) and the wall time per start, over N starts. */
async function measure(start, fd) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await start(fd);
  const cpu = process.cpuUsage(cpu0);
  return { cpu: (cpu.user + cpu.system) / 1000 / N, wall: (performance.now() - t0) / N };
}

export async function run() {
  // About what a daemon with a 100,000-task board holds: 80 MB of live objects.
  const ballast = Array.from({ length: 400 }, () => new Float64Array(25_000).fill(1));
  const fd = openSync('/dev/null', 'a');
  const results = { starter: [], child: [] };
  // A started process does not keep the event loop alive (as the daemon's, whose server does).
  const alive = setInterval(() => undefined, 1000);
  try {
    await measure(viaStarter, fd);
    await measure(viaChildProcess, fd);
    for (let r = 0; r < ROUNDS; r++) {
      results.starter.push(await measure(viaStarter, fd));
      results.child.push(await measure(viaChildProcess, fd));
    }
  } finally {
    clearInterval(alive);
    closeSync(fd);
  }
  const rss = process.memoryUsage().rss / 2 ** 20;
  const pick = (key, field) => median(results[key].map((x) => x[field]));
  const rows = [
    {
      figure: `the daemon's CPU to start a worker and see it end, median of ${ROUNDS} × ${N} (process RSS ${rss.toFixed(0)} MiB)`,
      unit: 'ms',
      value: pick('starter', 'cpu'),
      baselineName: "Node's child_process, same process",
      baseline: pick('child', 'cpu'),
      goal: '-',
    },
    {
      figure: 'wall time a start takes, to its end (an sh that exits at once)',
      unit: 'ms',
      value: pick('starter', 'wall'),
      baselineName: "Node's child_process, same process",
      baseline: pick('child', 'wall'),
      goal: '-',
    },
  ];
  void ballast.length;
  return printTable('Starting a worker', rows);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
