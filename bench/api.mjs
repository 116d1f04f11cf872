// The board's API speed: POST /tasks and GET /tasks/:id against bare Fastify + better-sqlite3
// (interleaved rounds), POST latency while the dispatcher spawns a burst of workers against the
// same with no spawning and against the bare server's, GET /tasks?limit=100 with 100,000 tasks,
// and websocket fan-out to 200 clients against bare ws.
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import {
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

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 32;
const env = envWithout('GATEHOUSE_');

function load(url, opts) {
  return autocannon({ url, connections: CONNECTIONS, duration: SECONDS, ...opts });
}

/** The daemon in its own process; `store`: the board's (SQLite in the data dir by default). */
export async function startGatehouse(
  dataDir,
  workers = { maxConcurrent: 0 },
  store = { kind: 'sqlite' },
  more = {},
) {
  const configPath = join(dataDir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({ store, workers, shutdown: { workers: 'terminate' }, ...more }),
  );
  const d = gatehouse(['run', '--data-dir', dataDir, '--port', '0', '--config', configPath], {
    env,
  });
  return { proc: d, url: await waitServing(dataDir, d.pid) };
}

export async function startChild(script, args) {
  const child = start([process.execPath, script, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const port = await waitFor(script, () => out.trim());
  return { proc: child, url: `http://127.0.0.1:${port}` };
}

function postTask(url, body = { title: 'probe' }, headers = {}) {
  return fetch(`${url}/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function loadPosts(url, headers = {}) {
  return load(`${url}/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ title: 'bench task' }),
  });
}

/**
 * Each load on gatehouse then on each baseline, ROUNDS times: the machine's drift hits all.
 * `headers`: a server's own, by name (an API token).
 */
export async function interleaved(servers, headers = {}) {
  const probe = async (name, url) =>
    (await (await postTask(url, undefined, headers[name])).json()).id;
  const ids = {};
  const out = {};
  for (const [name, url] of Object.entries(servers)) {
    ids[name] = await probe(name, url);
    out[name] = { post: [], get: [] };
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url] of Object.entries(servers)) {
      out[name].post.push(await loadPosts(url, headers[name]));
      out[name].get.push(await load(`${url}/tasks/${ids[name]}`, { headers: headers[name] ?? {} }));
    }
  }
  return out;
}

/**
 * GET /tasks/:id of one task, on gatehouse and on the bare server giving the same answer from the
 * same board (bench/bare-detail-server.mjs, started with `board`: the board file, or the
 * PostgreSQL URL and schema), in turn, ROUNDS times.
 */
export async function detailFloor(url, board) {
  const id = (await (await postTask(url)).json()).id;
  const floor = await startChild('bench/bare-detail-server.mjs', board);
  const out = { gh: [], floor: [], bytes: {} };
  for (const [name, base] of [
    ['gh', url],
    ['floor', floor.url],
  ])
    out.bytes[name] = (await (await fetch(`${base}/tasks/${id}`)).text()).length;
  for (let round = 0; round < ROUNDS; round++) {
    out.gh.push(await load(`${url}/tasks/${id}`));
    out.floor.push(await load(`${floor.url}/tasks/${id}`));
  }
  floor.proc.kill('SIGTERM');
  return out;
}

/**
 * POST /tasks latencies, one request at a time, while 200 waiting children of one parent become
 * ready at once (the parent's worker completes when told) and are spawned as workers (a sleep
 * each); or, as the baseline, the same with the children assigned to a profile with no slots,
 * so the same promotion happens and nothing is spawned.
 */
async function burstLatencies(dataDir, spawning) {
  const gate = join(dataDir, 'gate');
  const gh = await startGatehouse(dataDir, {
    maxConcurrent: 201,
    profiles: {
      burst: { command: ['/bin/sleep', '60'], maxConcurrent: 200 },
      parked: { command: ['/bin/true'], maxConcurrent: 0 },
      gate: {
        command: [
          '/bin/sh',
          '-c',
          `while [ ! -e "${gate}" ]; do sleep 0.01; done; printf '{"status":"done"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
        ],
      },
    },
  });
  const parent = await (await postTask(gh.url, { title: 'gate', assignee: 'gate' })).json();
  const assignee = spawning ? 'burst' : 'parked';
  for (let i = 0; i < 200; i++)
    await postTask(gh.url, { title: `child ${i}`, assignee, parents: [parent.id] });
  // Warm: the first requests compile their schemas and the JIT has not run yet.
  for (let i = 0; i < 100; i++) await postTask(gh.url, { title: 'warm', assignee: 'parked' });
  // Progress is read from the database, so that every request timed is a probe.
  const board = new Database(join(dataDir, 'gatehouse.db'), { readonly: true });
  const count = board.prepare("SELECT count(*) AS n FROM tasks WHERE status = 'running'");
  const running = () => count.get().n;
  const latencies = [];
  const probe = async () =>
    latencies.push(await timedPost(gh.url, { title: 'probe', assignee: 'parked' }));
  writeFileSync(gate, '');
  // Until the children are ready (and, spawning, all running), then as many again.
  const until = spawning ? 200 : 0;
  while (running() !== until || latencies.length < 50) await probe();
  for (let i = latencies.length; i > 0; i--) await probe();
  board.close();
  // Container mode: the sleepers end with the daemon.
  gh.proc.kill('SIGTERM');
  await gh.proc.exited;
  return latencies;
}

/** Milliseconds from sending one POST /tasks to having its whole answer. */
async function timedPost(url, body) {
  const t0 = performance.now();
  await (await postTask(url, body)).arrayBuffer();
  return performance.now() - t0;
}

/** Latencies of `n` posts sent one after the other (after 50 to warm up). */
async function postsOneAtATime(url, n) {
  const latencies = [];
  for (let i = 0; i < n + 50; i++) {
    const ms = await timedPost(url);
    if (i >= 50) latencies.push(ms);
  }
  return latencies;
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

/** GET /tasks/:id latencies, one at a time, `n` of them or until `until()` says stop. */
async function getsOneAtATime(url, id, n, until = () => false) {
  const latencies = [];
  while (latencies.length < n || (n === 0 && !until())) {
    const t0 = performance.now();
    await (await fetch(`${url}/tasks/${id}`)).arrayBuffer();
    latencies.push(performance.now() - t0);
    if (n > 0 && until()) break;
  }
  return latencies;
}

/**
 * GET /tasks/:id one at a time, quiet and then while 200 websockets resume from after=0 over
 * `events` events at once (dashboards after a restart).
 */
export async function resumeStorm(dataDir, events) {
  const gh = await startGatehouse(dataDir);
  let id;
  for (let i = 0; i < events; i += 50) {
    const batch = await Promise.all(Array.from({ length: 50 }, () => postTask(gh.url)));
    id ??= (await batch[0].json()).id;
  }
  await getsOneAtATime(gh.url, id, 100);
  const quiet = await getsOneAtATime(gh.url, id, 400);
  const resumers = start(
    [process.execPath, 'bench/ws-resumers.mjs', gh.url, '200', String(events)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  resumers.stdout.on('data', (d) => (out += d));
  // Timed from the moment they start connecting: a backlog sent as each one opens counts too.
  const t0 = performance.now();
  const storm = await getsOneAtATime(gh.url, id, 0, () => out.includes('done'));
  const seconds = (performance.now() - t0) / 1000;
  await resumers.exited;
  gh.proc.kill('SIGTERM');
  await gh.proc.exited;
  return { quiet, storm, seconds };
}

export async function run() {
  const dirs = [tempDir(), tempDir(), tempDir(), tempDir()];
  try {
    const gh = await startGatehouse(dirs[0]);
    // The board syncs every commit (synchronous = FULL): the baseline does the same; the bare
    // server without the sync (NORMAL) shows what durability costs either of them.
    const bare = await startChild('bench/bare-server.mjs', [join(dirs[1], 'bare.db'), '0', 'FULL']);
    const bareNormal = await startChild('bench/bare-server.mjs', [
      join(dirs[1], 'bare-normal.db'),
      '0',
      'NORMAL',
    ]);
    const loads = await interleaved({ gh: gh.url, bare: bare.url, bareNormal: bareNormal.url });
    const bareOneByOne = await postsOneAtATime(bare.url, 250);
    const detail = await detailFloor(gh.url, [join(dirs[0], 'gatehouse.db')]);
    gh.proc.kill('SIGTERM');
    bare.proc.kill('SIGTERM');
    bareNormal.proc.kill('SIGTERM');
    const avg = (results) => results.reduce((sum, r) => sum + r.requests.average, 0) / ROUNDS;
    const worstP99 = (results) => Math.max(...results.map((r) => r.latency.p99));

    const burstDirs = [tempDir(), tempDir()];
    dirs.push(...burstDirs);
    const quiet = await burstLatencies(burstDirs[0], false);
    const burst = await burstLatencies(burstDirs[1], true);

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

    const stormDir = tempDir();
    dirs.push(stormDir);
    const resume = await resumeStorm(stormDir, 2000);

    const fanDir = tempDir();
    dirs.push(fanDir);
    const fanGh = await startGatehouse(fanDir);
    const fanBare = await startChild('bench/bare-ws-server.mjs', []);
    const ghRate = await fanOut(fanGh.url, 200, 300);
    const bareRate = await fanOut(fanBare.url, 200, 300);

    return printTable(
      `Board API (${SECONDS} s per load, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds; server in its own process)`,
      [
        {
          figure: 'POST /tasks',
          unit: 'req/s',
          value: avg(loads.gh.post),
          baselineName: 'bare fastify+sqlite insert, synchronous=FULL',
          baseline: avg(loads.bare.post),
          goal: '>= 0.7x',
        },
        {
          figure: 'POST /tasks, durable commits',
          unit: 'req/s',
          value: avg(loads.gh.post),
          baselineName: 'bare insert, synchronous=NORMAL (not durable)',
          baseline: avg(loads.bareNormal.post),
        },
        {
          figure: 'POST /tasks latency p99, worst round',
          unit: 'ms',
          value: worstP99(loads.gh.post),
          baselineName: 'bare p99',
          baseline: worstP99(loads.bare.post),
        },
        {
          figure: 'GET /tasks/:id',
          unit: 'req/s',
          value: avg(loads.gh.get),
          baselineName: 'bare fastify+sqlite select',
          baseline: avg(loads.bare.get),
          goal: '>= 0.7x',
        },
        {
          figure: `GET /tasks/:id, a task's whole detail (${detail.bytes.gh} bytes), in turn with its floor`,
          unit: 'req/s',
          value: avg(detail.gh),
          baselineName: `the floor: bare fastify, the same detail by the board's own read (${detail.bytes.floor} bytes)`,
          baseline: avg(detail.floor),
        },
        {
          figure: `POST /tasks p99 while 200 workers spawn (median ${median(burst).toFixed(1)}, max ${Math.max(...burst).toFixed(0)} ms; ${burst.length} posts, one at a time)`,
          unit: 'ms',
          value: p99(burst),
          baselineName: `same posts, no spawning (median ${median(quiet).toFixed(1)}, max ${Math.max(...quiet).toFixed(0)} ms)`,
          baseline: p99(quiet),
          goal: '<= 2x',
        },
        {
          figure: `the floor: POST one at a time to the bare server (median ${median(bareOneByOne).toFixed(1)}, max ${Math.max(...bareOneByOne).toFixed(0)} ms; ${bareOneByOne.length} posts)`,
          unit: 'ms',
          value: p99(bareOneByOne),
          baselineName: 'gatehouse, same posts, no spawning',
          baseline: p99(quiet),
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
          figure: `GET /tasks/:id p99 while 200 websockets resume from after=0 over 2,000 events (median ${median(resume.storm).toFixed(1)}, max ${Math.max(...resume.storm).toFixed(0)} ms; ${resume.storm.length} GETs in ${resume.seconds.toFixed(1)} s)`,
          unit: 'ms',
          value: p99(resume.storm),
          baselineName: `same GETs, no websockets (median ${median(resume.quiet).toFixed(1)} ms)`,
          baseline: p99(resume.quiet),
          goal: '<= 2x',
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
