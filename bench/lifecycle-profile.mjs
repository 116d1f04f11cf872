// Where the daemon's time per task lifecycle goes: bench/dispatcher.mjs's lifecycles (trivial
// worker, 8 at a time) run under V8's sampling profiler in a child process, each sample given to
// the innermost phase on its stack. V8 samples the main thread by the wall clock, so a phase's
// share includes the time its system calls block (a file created on a slow disk): beside it,
// the run's daemon CPU per lifecycle as process.cpuUsage() tells it.
// `node bench/lifecycle-profile.mjs [tasks]`; `BENCH_PROFILE_ROOT` profiles another checkout.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { printTable, removeDir, tempDir } from './lib.mjs';

/** Innermost first: a sample goes to the first phase found walking from its leaf to the root. */
const PHASES = [
  [
    'spawn (the wrapper started: posix_spawn, until its exec)',
    (f) =>
      (f.functionName === 'spawn' && f.url === 'node:child_process') ||
      /proc\/start-process\.js$/.test(f.url),
  ],
  [
    'leftover check (process table)',
    (f) => /\/proc\/(terminate|process-table|process-age)\.js$/.test(f.url),
  ],
  [
    'run folder and files',
    (f) =>
      /run-files\.js$/.test(f.url) ||
      (/worker-spawn\.js$/.test(f.url) && f.functionName !== 'spawnWorker') ||
      (['mkdirSync', 'openSync', 'closeSync', 'writeFileSync'].includes(f.functionName) &&
        /dispatch/.test(f.parentUrl ?? '')),
  ],
  [
    'events (append, bus, feed)',
    (f) => /(event-store|event-bus|event-feed)\.js$/.test(f.url) || f.functionName === 'publish',
  ],
  ['websocket', (f) => /\/ws\/lib\/|websocket/.test(f.url)],
  ['metrics', (f) => /prom-client/.test(f.url)],
  ['logging', (f) => /\/(pino|sonic-boom|thread-stream)\//.test(f.url)],
  ['claim (query and transaction)', (f) => /claim-pass\.js$|moves\/claim\.js$/.test(f.url)],
  ['spawn recorded (transaction)', (f) => f.functionName === 'recordSpawn'],
  [
    'exit handling and settle (transaction)',
    (f) =>
      /run-endings\.js$|moves\/settle\.js$/.test(f.url) ||
      f.functionName === 'onexit' ||
      /ChildProcess\._handle\.onexit/.test(f.functionName),
  ],
  ['launch (the rest of spawnWorker)', (f) => /(launch|worker-spawn)\.js$/.test(f.url)],
  [
    "creating the tasks (the API's part)",
    (f) => f.functionName === 'createTask' || /create-task\.js$/.test(f.url),
  ],
  [
    'tick (deadlines, reaping, samples)',
    (f) =>
      /dispatch\/(dispatcher|deadlines|run-reaper|worker-samples|resource-sampler|agent-watch)\.js$/.test(
        f.url,
      ),
  ],
  ['the bench polling the board', (f) => /bench\/(dispatcher|lib)\.mjs$/.test(f.url)],
];

const root = resolve(process.env.BENCH_PROFILE_ROOT ?? join(import.meta.dirname, '..'));
const n = Number(process.argv[2] ?? 400);

function profileChild() {
  const dir = tempDir();
  const script = `
    const { lifecycles } = await import(${JSON.stringify(join(root, 'bench/dispatcher.mjs'))});
    await lifecycles(50, 8);
    // A daemon past its first second, as a serving one is: until then the leftover check reads
    // every process's stat (src/proc/process-age.ts cannot yet rule out a step of the clock).
    await new Promise((r) => setTimeout(r, Math.max(0, 1500 - performance.now())));
    const { Session } = await import('node:inspector/promises');
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 1000 });
    await session.post('Profiler.start');
    const r = await lifecycles(${n}, 8);
    const { profile } = await session.post('Profiler.stop');
    (await import('node:fs')).writeFileSync(${JSON.stringify(join(dir, 'p.json'))}, JSON.stringify({ profile, r }));
  `;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (out.status !== 0) throw new Error(`profiled run failed (${out.status})`);
  const data = JSON.parse(readFileSync(join(dir, 'p.json'), 'utf8'));
  removeDir(dir);
  return data;
}

function phases(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const shares = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    let id = profile.samples[i];
    const leaf = byId.get(id).callFrame.functionName;
    let phase =
      leaf === '(idle)'
        ? 'idle (waiting for exits and the disk)'
        : leaf === '(garbage collector)'
          ? 'garbage collector'
          : "other (event loop, promises, the store's other reads)";
    while (id !== undefined) {
      const frame = byId.get(id).callFrame;
      const up = parent.get(id);
      const f = { ...frame, parentUrl: up === undefined ? undefined : byId.get(up).callFrame.url };
      const hit = PHASES.find(([, test]) => test(f));
      if (hit) {
        phase = hit[0];
        break;
      }
      id = up;
    }
    shares.set(phase, (shares.get(phase) ?? 0) + dt);
    total += dt;
  }
  return { shares, total };
}

/**
 * The floor of the spawn phase: the same wrapper and worker spawned by a bare node, whose fork
 * copies only its own few MiB of anonymous memory (a fork's cost grows with the parent's).
 */
function bareSpawn() {
  const script = `
    require('node:v8').setFlagsFromString('--semi-space-growth-factor=1');
    const { spawn } = require('node:child_process');
    const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
    const dir = mkdtempSync(require('node:os').tmpdir() + '/spawn-');
    const argv = [${JSON.stringify(join(root, 'libexec/run-worker.sh'))}, dir + '/exit.json', '/bin/sh', '-c', 'exit 0'];
    (async () => {
      const took = [];
      for (let i = 0; i < 100; i++) {
        const t = performance.now();
        const c = spawn('/bin/sh', argv, { stdio: 'ignore', detached: true });
        took.push(performance.now() - t);
        await new Promise((r) => c.on('exit', r));
      }
      rmSync(dir, { recursive: true });
      took.sort((a, b) => a - b);
      const anon = Number(readFileSync('/proc/self/status', 'utf8').match(/RssAnon:\\s+(\\d+)/)[1]);
      console.log(JSON.stringify({ ms: took[50], anonMiB: anon / 1024 }));
    })();
  `;
  const out = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`bare spawn failed: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

export async function run() {
  const { profile, r } = profileChild();
  const { shares, total } = phases(profile);
  const perLifecycle = total / 1000 / n;
  const rows = [...shares]
    .sort((a, b) => b[1] - a[1])
    .map(([phase, us]) => ({
      figure: phase,
      unit: 'ms',
      value: us / 1000 / n,
      baselineName: 'a lifecycle, all phases (wall, sampled)',
      baseline: perLifecycle,
    }));
  const floor = bareSpawn();
  rows.push({
    figure: `the floor: spawn() of the same wrapper by a bare node (${floor.anonMiB.toFixed(0)} MiB anonymous), median`,
    unit: 'ms',
    value: floor.ms,
    baselineName: "the daemon's spawn phase per lifecycle",
    baseline: (shares.get(PHASES[0][0]) ?? 0) / 1000 / n,
  });
  rows.push({
    figure: `daemon CPU per lifecycle (process.cpuUsage), ${r.rate.toFixed(1)} lifecycles/s`,
    unit: 'ms',
    value: r.daemonCpu,
    baselineName: "the run's own processes (wrapper and worker)",
    baseline: r.runsCpu,
  });
  return printTable(
    `Where a lifecycle's time goes (${n} tasks, ${root === resolve(import.meta.dirname, '..') ? 'this checkout' : root})`,
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
