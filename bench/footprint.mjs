// Daemon memory: RSS with 100,000 tasks on the board and 200 live workers, against an idle
// daemon with an empty board, both real `gatehouse run` processes in the same run.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '../dist/kanban/store/sqlite/db.js';
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

const post = (url, path, body) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((r) => r.json());

export async function run() {
  const idleDir = tempDir();
  const loadedDir = tempDir();
  try {
    const idle = await daemon(idleDir, {});
    await sleep(3000);
    const idleRss = rssMiB(idle.d.pid);

    const db = openDatabase(join(loadedDir, 'gatehouse.db'));
    const insert = db.prepare(
      'INSERT INTO tasks (id, title, status, created_at, updated_at, origin) VALUES (?, ?, ?, ?, ?, \'{"kind":"api"}\')',
    );
    db.transaction(() => {
      for (let i = 0; i < 100_000; i++)
        insert.run(
          `t_${randomBytes(6).toString('hex')}`,
          `task ${i}`,
          i % 2 ? 'done' : 'archived',
          i,
          i,
        );
    })();
    db.close();
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
    return printTable('Footprint', [
      {
        figure: 'daemon RSS, 100,000 tasks and 200 live workers',
        unit: 'MiB',
        value: loadedRss,
        baselineName: 'idle daemon, empty board',
        baseline: idleRss,
        goal: '<= 100 MiB',
      },
    ]);
  } finally {
    stopAll();
    removeDir(idleDir);
    removeDir(loadedDir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
