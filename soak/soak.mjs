#!/usr/bin/env node
// npm run soak -- --minutes N: thousands of random tasks, HTTP clients and websocket subscribers
// while a fault injector kills, replaces and zombifies the daemon, fails the webhook platform and
// fills the data dir's disk. Checks every promise at every sample and at the end; exits 1 on any
// violation. Everything stays on 127.0.0.1; every process it starts is ended by process group.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { openDatabase } from '../dist/kanban/store/sqlite/db.js';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/gatehouse.js');
const FIXTURE = join(ROOT, 'test/fixtures/workers/behave.mjs');
const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '2' }, rate: { type: 'string', default: '8' } },
});
const minutes = Number(values.minutes);
const rate = Number(values.rate);
if (!(minutes > 0) || !(rate > 0)) {
  console.error('usage: npm run soak -- --minutes N [--rate TASKS_PER_SECOND]');
  process.exit(64);
}

const MARK = `GATEHOUSE_SOAK_MARK=${process.pid}-${Date.now()}`;
const root = mkdtempSync(join(tmpdir(), 'gatehouse-soak-'));
const dataDir = join(root, 'data');
mkdirSync(dataDir);
const violations = [];
const notes = [];
const violate = (what) => {
  if (violations.length < 50) violations.push(what);
};

// A small tmpfs for the data dir makes "disk full" real; without mount rights it is skipped.
let quota = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', dataDir], { stdio: 'ignore' });
  quota = true;
} catch {
  notes.push('disk-full fault skipped: no permission to mount a size-limited tmpfs here');
}

// The webhook receiver (the platform double): records every notification it accepts.
const receiver = { failing: false, got: [] };
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (receiver.failing) return res.writeHead(503).end();
    receiver.got.push(JSON.parse(Buffer.concat(chunks).toString()));
    res.writeHead(200).end();
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = await new Promise((r) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const p = probe.address().port;
    probe.close(() => r(p));
  });
});
const config = join(root, 'gatehouse.json');
writeFileSync(
  config,
  JSON.stringify({
    workers: {
      tickSeconds: 0.2,
      maxConcurrent: 16,
      failureLimit: 3,
      killGraceSeconds: 0.3,
      rateLimitCooldownSeconds: 0.5,
      claimTtlSeconds: 10,
      defaultProfile: 'chaos',
      profiles: {
        chaos: { command: [process.execPath, FIXTURE, 'random'], maxRuntimeSeconds: 1.5 },
      },
    },
    platforms: [
      {
        name: 'ops',
        type: 'webhook',
        homeChannel: 'soak',
        options: {
          url: `http://127.0.0.1:${server.address().port}/hook`,
          secret: `whsec_${Buffer.from('soak-secret-value-key-bytes').toString('base64')}`,
        },
        breaker: {
          timeoutMs: 1000,
          errorThresholdPercentage: 50,
          resetTimeoutMs: 1000,
          volumeThreshold: 3,
        },
      },
    ],
  }),
);
const url = `http://127.0.0.1:${port}`;
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_'))),
  [MARK.split('=')[0]]: MARK.split('=')[1],
};

// Every instance runs under a parent that never reaps it (sh exec'd into sleep), so a killed
// instance stays a zombie, as under systemd before it reaps.
const parents = [];
let current = null;
function startDaemon(replace) {
  const args = [
    BIN,
    'run',
    '--data-dir',
    dataDir,
    '--port',
    String(port),
    '--config',
    config,
    ...(replace ? ['--replace'] : []),
  ];
  const parent = spawn(
    'sh',
    [
      '-c',
      `"${process.execPath}" ${args.map((a) => `"${a}"`).join(' ')} >>"${root}/daemon.log" 2>&1 & echo $!; exec sleep 100000`,
    ],
    { env, detached: true, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  parents.push(parent.pid);
  return new Promise((res) => parent.stdout.once('data', (d) => res(Number(String(d).trim()))));
}
async function serving(pid, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const rec = JSON.parse(readFileSync(join(dataDir, 'gatehouse.pid'), 'utf8'));
      if (rec.pid === pid && (await fetch(`${url}/health`)).ok) return true;
    } catch {
      // not yet
    }
    await sleep(50);
  }
  return false;
}
const stat = (pid) => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
};
const alive = (pid) => {
  const s = stat(pid);
  return s !== null && s[0] !== 'Z' && s[0] !== 'X';
};
const environ = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    return [];
  }
};

/** Live worker processes (the fixture, not wrappers), by task. */
function workersByTask() {
  const out = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || !alive(Number(name))) continue;
    const env = environ(Number(name));
    if (!env.includes(MARK)) continue;
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmd.includes(FIXTURE)) continue;
    const task = env.find((e) => e.startsWith('GATEHOUSE_TASK_ID='))?.slice(18);
    if (task) out.set(task, [...(out.get(task) ?? []), Number(name)]);
  }
  return out;
}

current = await startDaemon(false);
if (!(await serving(current))) throw new Error('the daemon did not start');
const deadline = Date.now() + minutes * 60_000;
const created = new Set();
let faults = { sigkill: 0, sigterm: 0, replace: 0, webhookOutage: 0, diskFull: 0 };
const rss = [];
let samples = 0;

const creator = (async () => {
  for (let n = 0; Date.now() < deadline; n++) {
    try {
      const res = await fetch(`${url}/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: `soak ${n}` }),
        signal: AbortSignal.timeout(5000),
      });
      if (res.status === 201) created.add((await res.json()).id);
    } catch {
      // the daemon is restarting: the title is simply not created
    }
    await sleep(1000 / rate);
  }
})();

const readers = Array.from({ length: 2 }, () =>
  (async () => {
    while (Date.now() < deadline) {
      try {
        const list = await (
          await fetch(`${url}/tasks?limit=50&order=desc`, { signal: AbortSignal.timeout(5000) })
        ).json();
        const one = list.tasks?.[0];
        if (one) await fetch(`${url}/tasks/${one.id}`, { signal: AbortSignal.timeout(5000) });
      } catch {
        // restarting
      }
      await sleep(100);
    }
  })(),
);

const subscribers = Array.from({ length: 3 }, (_, i) => {
  const sub = { lastId: 0, ids: 0, broken: 0, ws: null, stop: false };
  const connect = () => {
    if (sub.stop) return;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/events/stream?after=${sub.lastId}`);
    sub.ws = ws;
    ws.on('message', (data) => {
      const id = JSON.parse(String(data)).id;
      if (id !== sub.lastId + 1)
        violate(`subscriber ${i}: expected event ${sub.lastId + 1}, got ${id}`);
      sub.lastId = id;
      sub.ids++;
    });
    ws.on('error', () => undefined);
    ws.on('close', () => setTimeout(connect, 200));
  };
  connect();
  return sub;
});

let samplingDone = false;
const sampler = (async () => {
  while (Date.now() < deadline + 90_000 && !samplingDone) {
    for (const [task, pids] of workersByTask())
      if (pids.length > 1) violate(`two live workers for ${task}: ${pids.join(', ')}`);
    if (alive(current)) {
      const line = readFileSync(`/proc/${current}/status`, 'utf8')
        .split('\n')
        .find((l) => l.startsWith('VmRSS:'));
      if (line)
        rss.push({ pid: current, at: Date.now(), mib: Number(line.split(/\s+/)[1]) / 1024 });
    }
    samples++;
    await sleep(100);
  }
})();

// Faults take turns, so each kind happens in any run of a few minutes; restarts alternate between
// a plain start (the killed owner is a zombie) and --replace.
const FAULTS = ['sigkill', 'diskFull', 'replace', 'webhookOutage', 'sigterm'];
// The last quarter (at least 30 s) is calm, so one instance lives long enough to show its memory.
const faultsUntil = deadline - Math.max(30_000, (deadline - Date.now()) / 4);
const injector = (async () => {
  for (let turn = 0; Date.now() < faultsUntil; turn++) {
    await sleep(5000 + Math.random() * 3000);
    const fault = FAULTS[turn % FAULTS.length];
    if (fault === 'diskFull' && !quota) continue;
    faults[fault]++;
    if (fault === 'sigkill') {
      process.kill(current, 'SIGKILL');
      current = await startDaemon(turn % 2 === 0);
    } else if (fault === 'sigterm') {
      process.kill(current, 'SIGTERM');
      const old = current;
      for (let i = 0; i < 200 && alive(old); i++) await sleep(50);
      current = await startDaemon(false);
    } else if (fault === 'replace') {
      current = await startDaemon(true);
    } else if (fault === 'webhookOutage') {
      receiver.failing = true;
      await sleep(3000);
      receiver.failing = false;
    } else {
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${join(dataDir, 'filler')}`, 'bs=1M', 'count=64'], {
          stdio: 'ignore',
        });
      } catch {
        // ENOSPC: exactly what we wanted
      }
      await sleep(3000);
      rmSync(join(dataDir, 'filler'), { force: true });
    }
    if (!(await serving(current)))
      violate(`instance ${current} did not serve after a ${fault} fault`);
  }
})();

await Promise.all([creator, injector, ...readers]);
// Whatever the last fault was, a daemon must serve now (systemd would have restarted it).
if (!alive(current) || !(await serving(current, 5000))) {
  notes.push(`the last instance had exited; restarted for the drain`);
  current = await startDaemon(true);
  await serving(current);
}
// Drain: everything created settles, every notification is delivered.
const settleBy = Date.now() + 90_000;
let board = {};
while (Date.now() < settleBy) {
  try {
    board = (await (await fetch(`${url}/ready`)).json()).board ?? {};
    if (
      board.done + board.blocked === created.size &&
      (board.ready ?? 0) + (board.running ?? 0) + (board.todo ?? 0) === 0
    )
      break;
  } catch {
    // restarting
  }
  await sleep(500);
}
await sleep(3000);
process.kill(current, 'SIGTERM');
for (let i = 0; i < 300 && alive(current); i++) await sleep(50);
for (const s of subscribers) {
  s.stop = true;
  s.ws?.terminate();
}
for (let i = 0; i < 100 && workersByTask().size > 0; i++) await sleep(100);
samplingDone = true;
await sampler;
const left = [...workersByTask().values()].flat();
if (left.length) violate(`worker processes left behind: ${left.join(', ')}`);

const db = openDatabase(join(dataDir, 'gatehouse.db'));
const integrity = db.pragma('integrity_check', { simple: true });
if (integrity !== 'ok') violate(`integrity_check: ${integrity}`);
const tasks = db.prepare('SELECT id, title, status FROM tasks').all();
const titles = new Set(tasks.map((t) => t.title));
if (titles.size !== tasks.length) violate(`duplicated tasks: ${tasks.length - titles.size}`);
for (const id of created)
  if (!tasks.some((t) => t.id === id)) violate(`task ${id} was created (201) but is lost`);
const unsettled = tasks.filter((t) => t.status !== 'done' && t.status !== 'blocked');
if (unsettled.length)
  violate(
    `${unsettled.length} tasks never settled (${unsettled
      .slice(0, 3)
      .map((t) => `${t.id}:${t.status}`)
      .join(', ')})`,
  );
const openRuns = db
  .prepare('SELECT count(*) AS n FROM runs WHERE outcome IS NULL OR ended_at IS NULL')
  .get().n;
if (openRuns) violate(`${openRuns} runs without an outcome`);
// Each notification carries its event id (the receiver's idempotency key): every notifiable event
// must have reached the receiver; repeats (a SIGKILL between a send and its cursor commit) are
// counted, and a receiver drops them by event id.
const notifiable = db
  .prepare(
    "SELECT id FROM events WHERE kind IN ('completed','blocked','gave_up','crashed','timed_out','archived') AND task_id IS NOT NULL",
  )
  .all();
const receipts = new Map();
for (const m of receiver.got) receipts.set(m.eventId, (receipts.get(m.eventId) ?? 0) + 1);
const missing = notifiable.filter((e) => !receipts.has(e.id)).length;
const repeats = [...receipts.values()].reduce((a, n) => a + n - 1, 0);
const delivered = notifiable.length - missing;
if (missing) violate(`${missing} notifications never delivered`);
const runsCount = db.prepare('SELECT count(*) AS n FROM runs').get().n;
const adopted = db.prepare("SELECT count(*) AS n FROM events WHERE kind = 'adopted'").get().n;
db.close();

// Memory: per instance, the last minute's mean against its first minute's, for instances that
// lived long enough to tell; and no instance above a fixed ceiling.
const byPid = new Map();
for (const r of rss) byPid.set(r.pid, [...(byPid.get(r.pid) ?? []), r]);
let growth = '-';
for (const [, series] of byPid) {
  if (series.at(-1).at - series[0].at < 25_000) continue;
  const mean = (xs) => xs.reduce((a, r) => a + r.mib, 0) / xs.length;
  const first = mean(series.filter((r) => r.at - series[0].at < 10_000));
  const last = mean(series.filter((r) => series.at(-1).at - r.at < 10_000));
  growth = `${first.toFixed(0)} → ${last.toFixed(0)} MiB`;
  if (last > first * 1.5 + 30) violate(`memory grew in instance: ${growth}`);
}
const peak = Math.max(...rss.map((r) => r.mib));
if (peak > 400) violate(`daemon RSS peaked at ${peak.toFixed(0)} MiB`);

for (const pid of parents) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone
  }
}
server.closeAllConnections();
server.close();
let logTail = '';
try {
  logTail = readFileSync(join(root, 'daemon.log'), 'utf8')
    .split('\n')
    .filter((l) => /"level":(50|60)/.test(l))
    .slice(-5)
    .join('\n');
} catch {
  // no log
}
if (quota) execFileSync('umount', [dataDir], { stdio: 'ignore' });
rmSync(root, { recursive: true, force: true });

const rows = [
  ['minutes', minutes],
  ['tasks created (201)', created.size],
  ['runs', runsCount],
  ['workers adopted across restarts', adopted],
  [
    'faults: SIGKILL / SIGTERM / --replace / webhook outage / disk full',
    `${faults.sigkill} / ${faults.sigterm} / ${faults.replace} / ${faults.webhookOutage} / ${faults.diskFull}`,
  ],
  ['process-table samples (two workers for a task: never)', samples],
  ['websocket events received (3 resuming subscribers)', subscribers.map((s) => s.ids).join(' / ')],
  [
    'notifications delivered (once per event id) / raw repeats',
    `${delivered} of ${notifiable.length} / ${repeats}`,
  ],
  ['daemon RSS peak; longest instance first → last', `${peak.toFixed(0)} MiB; ${growth}`],
  ['SQLite integrity_check', integrity],
  ['violations', violations.length],
];
console.log('\n| soak | value |\n|---|---|');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
for (const n of notes) console.log(`note: ${n}`);
for (const v of violations) console.log(`VIOLATION: ${v}`);
if (violations.length && logTail) console.log(`last errors in the daemon log:\n${logTail}`);
process.exit(violations.length ? 1 : 0);
