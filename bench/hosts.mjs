// Recovery across hosts on PostgreSQL, with the default timings (lease 30 s, renew 5 s, grace
// 20 s): host a's daemon is killed while its worker runs, host b is started, and the times are
// counted from a's last renewal as the database recorded it (one clock on this machine). The
// baselines are what the design allows at the earliest: the worker ended before the lease, the
// task back after lease + grace.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentBootId, pidExists } from '../dist/proc/index.js';
import { startCluster } from '../scripts/pg-cluster.mjs';
import {
  envWithout,
  gatehouse,
  printTable,
  removeDir,
  stopAll,
  tempDir,
  waitFor,
  waitServing,
} from './lib.mjs';

const LEASE_S = 30;
const GRACE_S = 20;

async function startHost(name, store) {
  const dataDir = tempDir();
  const config = join(dataDir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      store,
      cluster: { hostName: name },
      workers: { profiles: { long: { command: ['sleep', '600'] } }, defaultProfile: 'long' },
    }),
  );
  const proc = gatehouse(['run', '--data-dir', dataDir, '--port', '0', '--config', config], {
    env: envWithout('GATEHOUSE_'),
  });
  return { dataDir, proc, url: await waitServing(dataDir, proc.pid, 30_000) };
}

const get = async (url, path) => (await fetch(`${url}${path}`)).json();

export async function run() {
  const cluster = await startCluster();
  if (cluster.missing) throw new Error(cluster.missing);
  const store = {
    kind: 'postgres',
    url: cluster.url,
    schema: `b_${randomBytes(4).toString('hex')}`,
  };
  const dirs = [];
  try {
    const a = await startHost('a', store);
    dirs.push(a.dataDir);
    const created = await fetch(`${a.url}/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'long' }),
    });
    const { id } = await created.json();
    const run = await waitFor('a worker', async () => {
      const [r] = (await get(a.url, `/tasks/${id}`)).runs;
      return r?.pid ? r : null;
    });
    // Its identity: a recycled pid is not the worker.
    const worker = { pid: run.pid, startTime: run.startTime, bootId: currentBootId() };
    a.proc.kill('SIGKILL');
    await a.proc.exited;
    let workerGoneAt = null;
    const watch = setInterval(() => {
      if (workerGoneAt === null && !pidExists(worker.pid, worker)) workerGoneAt = Date.now();
    }, 20);
    const b = await startHost('b', store);
    dirs.push(b.dataDir);
    const [hostA] = (await get(b.url, '/hosts')).hosts;
    const events = await waitFor(
      'the task running on b',
      async () => {
        const found = (await get(b.url, `/tasks/${id}/events`)).events;
        return found.filter((e) => e.kind === 'spawned').length === 2 ? found : null;
      },
      120_000,
      100,
    );
    clearInterval(watch);
    const at = (kind, nth = 1) => events.filter((e) => e.kind === kind)[nth - 1].at;
    const from = hostA.renewedAt;
    await fetch(`${b.url}/tasks/${id}/archive`, { method: 'POST' });
    b.proc.kill('SIGTERM');
    await b.proc.exited;
    return printTable('Recovery across hosts on PostgreSQL (default timings, one trial)', [
      {
        figure: "dead host's worker ended, after that host's last renewal",
        unit: 's',
        value: (workerGoneAt - from) / 1000,
        baselineName: 'its lease',
        baseline: LEASE_S,
        goal: '< 1x (before the lease ends)',
      },
      {
        figure: "dead host's running task back to ready, after its last renewal",
        unit: 's',
        value: (at('lost') - from) / 1000,
        baselineName: 'lease + grace',
        baseline: LEASE_S + GRACE_S,
        goal: '<= 60 s',
      },
      {
        figure: 'the same task running on the other host, after that renewal',
        unit: 's',
        value: (at('spawned', 2) - from) / 1000,
        baselineName: 'lease + grace',
        baseline: LEASE_S + GRACE_S,
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
