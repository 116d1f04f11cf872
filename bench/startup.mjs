// First start to /health 200, a restart after kill -9 on a board of 100,000 tasks, and --replace
// over a live and a zombie owner, against a bare Node HTTP server's cold start, each measured in
// turn in every round.
import { cpSync, readFileSync } from 'node:fs';
import {
  BIN,
  envWithout,
  gatehouse,
  median,
  p99,
  printTable,
  removeDir,
  seedTasks,
  start,
  stopAll,
  tempDir,
  waitFor,
  waitServing,
} from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const env = envWithout('GATEHOUSE_');

async function bareServerStart() {
  const t0 = performance.now();
  const child = start(
    [
      process.execPath,
      '-e',
      "require('http').createServer((q,s)=>s.end('ok')).listen(0,'127.0.0.1',function(){console.log(this.address().port)})",
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const port = await waitFor('bare port', () => out.trim());
  await waitFor('bare health', async () => (await fetch(`http://127.0.0.1:${port}/`)).ok);
  const ms = performance.now() - t0;
  child.kill('SIGKILL');
  return ms;
}

/** A daemon started on `dir` until it serves, in ms; then stopped and `dir` removed. */
async function timedStart(dir) {
  const t0 = performance.now();
  const d = gatehouse(['run', '--data-dir', dir, '--port', '0'], { env });
  await waitServing(dir, d.pid);
  const ms = performance.now() - t0;
  d.kill('SIGTERM');
  await d.exited;
  removeDir(dir);
  return ms;
}

const coldStart = () => timedStart(tempDir());

async function replaceLive() {
  const dir = tempDir();
  const owner = gatehouse(['run', '--data-dir', dir, '--port', '0'], { env });
  await waitServing(dir, owner.pid);
  const t0 = performance.now();
  const next = gatehouse(['run', '--data-dir', dir, '--port', '0', '--replace'], { env });
  await waitServing(dir, next.pid);
  const ms = performance.now() - t0;
  next.kill('SIGTERM');
  await next.exited;
  removeDir(dir);
  return ms;
}

async function replaceZombie() {
  const dir = tempDir();
  const parent = start(
    [
      'sh',
      '-c',
      `"${process.execPath}" "${BIN}" run --data-dir "${dir}" --port 0 >/dev/null 2>&1 & echo $!; exec sleep 60`,
    ],
    { env, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let out = '';
  parent.stdout.on('data', (d) => (out += d));
  const pid = Number(await waitFor('owner pid', () => out.trim()));
  await waitServing(dir, pid);
  process.kill(pid, 'SIGKILL');
  await waitFor('zombie', () =>
    readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z'),
  );
  const t0 = performance.now();
  const next = gatehouse(['run', '--data-dir', dir, '--port', '0', '--replace'], { env });
  await waitServing(dir, next.pid);
  const ms = performance.now() - t0;
  next.kill('SIGTERM');
  await next.exited;
  process.kill(-parent.pid, 'SIGKILL');
  removeDir(dir);
  return ms;
}

/** A board of 100,000 tasks, none to run, made once and copied for each restart. */
let template = null;
function boardTemplate() {
  if (template) return template;
  template = tempDir();
  seedTasks(template, 100_000, ['done', 'archived']);
  return template;
}

/** A daemon on a 100,000-task board killed with SIGKILL, then started again (as systemd does). */
async function restartAfterKill() {
  const dir = tempDir();
  cpSync(boardTemplate(), dir, { recursive: true });
  const first = gatehouse(['run', '--data-dir', dir, '--port', '0'], { env });
  await waitServing(dir, first.pid);
  first.kill('SIGKILL');
  await first.exited;
  return timedStart(dir);
}

/** Each measure once per round, in turn, so the machine's drift hits them all alike. */
async function interleaved(fns) {
  const values = fns.map(() => []);
  for (let i = 0; i < RUNS; i++) for (const [j, fn] of fns.entries()) values[j].push(await fn());
  return values;
}

export async function run() {
  try {
    const [bare, cold, live, zombie, restart] = await interleaved([
      bareServerStart,
      coldStart,
      replaceLive,
      replaceZombie,
      restartAfterKill,
    ]);
    const base = { unit: 'ms', baselineName: 'bare node http start', baseline: median(bare) };
    return printTable(`Start-up and takeover (${RUNS} runs each, medians; p99 in brackets)`, [
      {
        figure: `first start on a new data dir to /health 200 (p99 ${p99(cold).toFixed(0)} ms)`,
        value: median(cold),
        ...base,
        goal: '<= 1500 ms',
      },
      {
        figure: `restart after kill -9, 100,000 tasks on the board, to /health 200 (p99 ${p99(restart).toFixed(0)} ms)`,
        value: median(restart),
        ...base,
        goal: '<= 1000 ms',
      },
      {
        figure: `--replace over a live owner (p99 ${p99(live).toFixed(0)} ms)`,
        value: median(live),
        ...base,
        goal: '-',
      },
      {
        figure: `--replace over a zombie owner (p99 ${p99(zombie).toFixed(0)} ms)`,
        value: median(zombie),
        ...base,
        goal: '< 1000 ms (hermes: up to 15 s)',
      },
    ]);
  } finally {
    stopAll();
    if (template) removeDir(template);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
