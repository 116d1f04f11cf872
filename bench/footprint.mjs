// Daemon memory: RSS with 100,000 tasks on the board and 200 live workers, and with 1,000 workers
// adopted by a daemon started after them (a restart), against an idle daemon with an empty
// board, all real `gatehouse run` processes in the same run.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  envWithout,
  gatehouse,
  printTable,
  removeDir,
  seedTasks,
  stopAll,
  tempDir,
  waitFor,
  waitServing,
} from './lib.mjs';

const env = envWithout('GATEHOUSE_');

function rssMiB(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line.trim().split(/\s+/)[1]) / 1024;
}

async function daemon(dataDir, workers) {
  const config = join(dataDir, 'config.json');
  writeFileSync(config, JSON.stringify({ workers: { tickSeconds: 1, ...workers } }));
  const d = gatehouse(['run', '--data-dir', dataDir, '--port', '0', '--config', config], { env });
  const url = await waitServing(dataDir, d.pid);
  return { d, url };
}

/** Live workers the daemon supervises, by its metrics. */
async function liveWorkers(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('gatehouse_workers{'))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/**
 * RSS of a daemon that adopted `n` live workers at its start: a first daemon starts them and
 * stops (its workers go on), a second takes the data dir over and adopts them.
 */
async function adoptedRss(dataDir, n) {
  const workers = {
    maxConcurrent: n,
    defaultProfile: 's',
    profiles: { s: { command: ['/bin/sleep', '600'], maxConcurrent: n } },
  };
  const first = await daemon(dataDir, workers);
  const ids = [];
  for (let i = 0; i < n; i++) ids.push((await post(first.url, '/tasks', { title: `w ${i}` })).id);
  await waitFor(`${n} running`, async () => (await liveWorkers(first.url)) === n, 300_000, 200);
  first.d.kill('SIGTERM');
  await first.d.exited;
  const second = await daemon(dataDir, workers);
  await waitFor(`${n} adopted`, async () => (await liveWorkers(second.url)) === n, 120_000, 200);
  await sleep(3000);
  const rss = rssMiB(second.d.pid);
  for (const id of ids) await post(second.url, `/tasks/${id}/archive`, {});
  await waitFor('all ended', async () => (await liveWorkers(second.url)) === 0, 120_000, 200);
  second.d.kill('SIGTERM');
  await second.d.exited;
  return rss;
}

const post = (url, path, body) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((r) => r.json());

export async function run() {
  const idleDir = tempDir();
  const loadedDir = tempDir();
  const adoptDir = tempDir();
  try {
    const idle = await daemon(idleDir, {});
    await sleep(3000);
    const idleRss = rssMiB(idle.d.pid);

    seedTasks(loadedDir, 100_000, ['done', 'archived']);
    const sleeper = { command: ['/bin/sleep', '600'], maxConcurrent: 200 };
    const loaded = await daemon(loadedDir, {
      maxConcurrent: 200,
      defaultProfile: 's',
      profiles: { s: sleeper },
    });
    const ids = [];
    for (let i = 0; i < 200; i++)
      ids.push((await post(loaded.url, '/tasks', { title: `live ${i}` })).id);
    await waitFor(
      '200 running',
      async () => (await (await fetch(`${loaded.url}/ready`)).json()).board.running === 200,
      120_000,
      100,
    );
    await sleep(3000);
    const loadedRss = rssMiB(loaded.d.pid);
    for (const id of ids) await post(loaded.url, `/tasks/${id}/archive`, {});
    idle.d.kill('SIGTERM');
    loaded.d.kill('SIGTERM');
    await Promise.all([idle.d.exited, loaded.d.exited]);
    const adopted = await adoptedRss(adoptDir, 1000);
    return printTable('Footprint', [
      {
        figure: 'daemon RSS, 100,000 tasks and 200 live workers',
        unit: 'MiB',
        value: loadedRss,
        baselineName: 'idle daemon, empty board',
        baseline: idleRss,
        goal: '<= 150 MiB',
      },
      {
        figure: 'daemon RSS, 1,000 workers adopted at its start (a restart)',
        unit: 'MiB',
        value: adopted,
        baselineName: 'idle daemon, empty board',
        baseline: idleRss,
        goal: '<= 150 MiB',
      },
    ]);
  } finally {
    stopAll();
    removeDir(idleDir);
    removeDir(loadedDir);
    removeDir(adoptDir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
