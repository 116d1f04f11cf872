// The board's API speed: POST /tasks and GET /tasks/:id against bare Fastify + better-sqlite3,
// GET /tasks?limit=100 with 100,000 tasks, and websocket fan-out to 200 clients against bare ws.
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { openDatabase } from '../dist/kanban/store/db.js';
import {
  envWithout,
  gatehouse,
  printTable,
  removeDir,
  start,
  stopAll,
  tempDir,
  waitFor,
  waitServing,
} from './lib.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const env = envWithout('GATEHOUSE_');

function load(url, opts) {
  return autocannon({ url, connections: 10, duration: SECONDS, ...opts });
}

async function startGatehouse(dataDir) {
  const configPath = join(dataDir, 'config.json');
  writeFileSync(configPath, JSON.stringify({ workers: { maxConcurrent: 0 } }));
  const d = gatehouse(['run', '--data-dir', dataDir, '--port', '0', '--config', configPath], {
    env,
  });
  return { proc: d, url: await waitServing(dataDir, d.pid) };
}

async function startChild(script, args) {
  const child = start([process.execPath, script, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const port = await waitFor(script, () => out.trim());
  return { proc: child, url: `http://127.0.0.1:${port}` };
}

async function postThenGet(url) {
  const post = await load(`${url}/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'bench task' }),
  });
  const made = await (
    await fetch(`${url}/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"title":"probe"}',
    })
  ).json();
  const get = await load(`${url}/tasks/${made.id}`);
  return { post, get };
}

/** 100,000 tasks written straight into a fresh board database. */
function seedTasks(dataDir, n) {
  const db = openDatabase(join(dataDir, 'gatehouse.db'));
  const insert = db.prepare(
    'INSERT INTO tasks (id, title, status, created_at, updated_at, origin) VALUES (?, ?, ?, ?, ?, \'{"kind":"api"}\')',
  );
  const statuses = ['ready', 'done', 'blocked', 'archived'];
  db.transaction(() => {
    for (let i = 0; i < n; i++)
      insert.run(`t_${randomBytes(6).toString('hex')}`, `task ${i}`, statuses[i % 4], i, i);
  })();
  db.close();
}

/** Connects `n` clients, POSTs `events` messages 10 at a time, and times full delivery. */
async function fanOut(url, n, events) {
  const clients = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise((resolve, reject) => {
          const ws = new WebSocket(`${url.replace('http', 'ws')}/events/stream`);
          ws.count = 0;
          ws.on('message', () => ws.count++);
          ws.once('open', () => resolve(ws));
          ws.once('error', reject);
        }),
    ),
  );
  const t0 = performance.now();
  let sent = 0;
  const post = async () => {
    while (sent < events) {
      sent++;
      await fetch(`${url}/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"title":"fan-out"}',
      });
    }
  };
  await Promise.all(Array.from({ length: 10 }, post));
  await waitFor('full delivery', () => clients.every((c) => c.count >= events), 120_000, 5);
  const seconds = (performance.now() - t0) / 1000;
  for (const c of clients) c.terminate();
  return (n * events) / seconds;
}

export async function run() {
  const dirs = [tempDir(), tempDir(), tempDir(), tempDir()];
  try {
    const gh = await startGatehouse(dirs[0]);
    const bare = await startChild('bench/bare-server.mjs', [join(dirs[1], 'bare.db')]);
    const g = await postThenGet(gh.url);
    const b = await postThenGet(bare.url);
    gh.proc.kill('SIGTERM');
    bare.proc.kill('SIGTERM');

    seedTasks(dirs[2], 100_000);
    const big = await startGatehouse(dirs[2]);
    const list = await load(`${big.url}/tasks?limit=100`);
    const filtered = await load(`${big.url}/tasks?limit=100&status=done`);
    const bareList = await startChild('bench/bare-server.mjs', [
      join(dirs[3], 'bare.db'),
      '100000',
    ]);
    const bareGet = await load(`${bareList.url}/tasks?limit=100`);
    big.proc.kill('SIGTERM');
    bareList.proc.kill('SIGTERM');

    const fanDir = tempDir();
    dirs.push(fanDir);
    const fanGh = await startGatehouse(fanDir);
    const fanBare = await startChild('bench/bare-ws-server.mjs', []);
    const ghRate = await fanOut(fanGh.url, 200, 300);
    const bareRate = await fanOut(fanBare.url, 200, 300);

    const rps = (r) => r.requests.average;
    return printTable(
      `Board API (${SECONDS} s per load, 10 connections, server in its own process)`,
      [
        {
          figure: 'POST /tasks',
          unit: 'req/s',
          value: rps(g.post),
          baselineName: 'bare fastify+sqlite insert',
          baseline: rps(b.post),
          goal: '>= 0.5x',
        },
        {
          figure: `POST /tasks latency p50 / p99 ${g.post.latency.p50} / ${g.post.latency.p99} ms`,
          unit: 'ms',
          value: g.post.latency.p99,
          baselineName: 'bare p99',
          baseline: b.post.latency.p99,
        },
        {
          figure: 'GET /tasks/:id',
          unit: 'req/s',
          value: rps(g.get),
          baselineName: 'bare fastify+sqlite select',
          baseline: rps(b.get),
          goal: '>= 0.5x',
        },
        {
          figure: `GET /tasks?limit=100, 100k tasks: p50 ${list.latency.p50} ms`,
          unit: 'ms p99',
          value: list.latency.p99,
          baselineName: 'bare 100-row select p99',
          baseline: bareGet.latency.p99,
        },
        {
          figure: `GET /tasks?limit=100&status=done, 100k tasks: p50 ${filtered.latency.p50} ms`,
          unit: 'ms p99',
          value: filtered.latency.p99,
          baselineName: 'bare 100-row select p99',
          baseline: bareGet.latency.p99,
        },
        {
          figure: 'websocket fan-out, 200 clients, 300 events',
          unit: 'msg/s',
          value: ghRate,
          baselineName: 'bare ws broadcast',
          baseline: bareRate,
          goal: '>= 0.5x',
        },
      ],
    );
  } finally {
    stopAll();
    for (const d of dirs) removeDir(d);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
