// Shared bench helpers: timing statistics, a results table, and the built daemon as a process.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFileSync } from 'node:fs';
import { pino } from 'pino';
import { loadConfig } from '../dist/config/load.js';
import { composeGateway } from '../dist/gateway/compose.js';
import { claimTask } from '../dist/kanban/moves/claim.js';
import { openDatabase } from '../dist/kanban/store/sqlite/db.js';
import { openBoard } from '../dist/kanban/store/open.js';

export const ROOT = resolve(import.meta.dirname, '..');
export const BIN = join(ROOT, 'bin/gatehouse.js');

export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
  return sorted[Math.max(0, index)];
}

export const median = (values) => quantile(values, 0.5);
export const p99 = (values) => quantile(values, 0.99);

const fmt = (n) => (Number.isFinite(n) ? (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2)) : '-');

/**
 * Prints rows {figure, unit, value, baselineName, baseline, goal} as a Markdown table with the
 * ratio value/baseline, and returns them for a caller that collects every bench's rows.
 */
export function printTable(title, rows) {
  console.log(`\n### ${title}\n`);
  console.log('| figure | value | baseline (same run) | ratio | goal |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) {
    const ratio = r.baseline ? r.value / r.baseline : NaN;
    console.log(
      `| ${r.figure} | ${fmt(r.value)} ${r.unit} | ${r.baselineName ? `${r.baselineName}: ${fmt(r.baseline)} ${r.unit}` : '-'} | ${Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : '-'} | ${r.goal ?? '-'} |`,
    );
  }
  return rows;
}

/** A new folder under `root` (the system's temp dir unless told). */
export function tempDir(root = tmpdir()) {
  return mkdtempSync(join(root, 'gatehouse-bench-'));
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

export async function waitFor(what, probe, timeoutMs = 20_000, pollMs = 2) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

export function readPid(dataDir) {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'gatehouse.pid'), 'utf8'));
  } catch {
    return null;
  }
}

/** Resolves with the URL once `pid` owns `dataDir` and answers /health. */
export function waitServing(dataDir, pid, timeoutMs) {
  return waitFor(
    `pid ${pid} serving`,
    async () => {
      const r = readPid(dataDir);
      if (!r || r.pid !== pid || r.port === 0) return null;
      const res = await fetch(`http://127.0.0.1:${r.port}/health`);
      return res.ok ? `http://127.0.0.1:${r.port}` : null;
    },
    timeoutMs,
  );
}

const started = new Set();

/** Starts a process in its own group; `stopAll` ends every group started. */
export function start(argv, opts = {}) {
  const child = spawn(argv[0], argv.slice(1), {
    stdio: 'ignore',
    detached: true,
    cwd: ROOT,
    ...opts,
  });
  started.add(child.pid);
  child.exited = new Promise((res) => child.on('exit', (code, signal) => res({ code, signal })));
  return child;
}

/** The daemon as contrib/gatehouse.service, the Dockerfile and `npm start` run it. */
export function gatehouse(args, opts) {
  return start([process.execPath, BIN, ...args], opts);
}

export function stopAll() {
  for (const pid of started) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  started.clear();
}

const benchHosts = new WeakMap();

/** Claims `taskId` for the demo profile as the dispatcher would, without starting anything. */
export async function claimForDemo(board, taskId, logPathFor) {
  let hostId = benchHosts.get(board);
  if (!hostId) {
    hostId = board
      .transact((tx) =>
        tx.store.hosts.register({
          name: 'bench',
          capacity: 8,
          profiles: ['demo'],
          version: 'bench',
          leaseMs: 3_600_000,
        }),
      )
      .then((host) => host.id);
    benchHosts.set(board, hostId);
  }
  const claim = { profile: 'demo', host: 'bench', hostId: await hostId, leaseMs: 60_000 };
  return board.transact((tx) =>
    claimTask(tx, { taskId, ...claim, keepDescendants: false, logPathFor }),
  );
}

export function envWithout(prefix) {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith(prefix)));
}

/** `n` tasks (ready, done, blocked, archived in turn) written straight into a fresh board database. */
export function seedTasks(dataDir, n, statuses = ['ready', 'done', 'blocked', 'archived']) {
  const db = openDatabase(join(dataDir, 'gatehouse.db'));
  const insert = db.prepare(
    'INSERT INTO tasks (id, title, status, created_at, updated_at, origin, block_reason) VALUES (?, ?, ?, ?, ?, \'{"kind":"api"}\', ?)',
  );
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const status = statuses[i % statuses.length];
      const reason = status === 'blocked' ? 'seeded' : null;
      insert.run(`t_${randomBytes(6).toString('hex')}`, `task ${i}`, status, i, i, reason);
    }
  })();
  db.close();
}

const OPEN_HOOKS = { onRepair: () => {}, onRetry: () => {}, onIdleError: () => {} };

/**
 * A gateway in this process on `config` (its dataDir added), serving on a free port with its
 * dispatcher started; `extra`: more of its deps (a clock); `close()` runs its close steps.
 */
export async function dispatchingGateway(dataDir, config, extra = {}) {
  const configPath = join(dataDir, 'config.json');
  writeFileSync(configPath, JSON.stringify({ dataDir, ...config }));
  const loaded = loadConfig({ config: configPath }, process.env, dataDir);
  const store = await openBoard(loaded.store, dataDir, OPEN_HOOKS);
  const gw = await composeGateway({
    config: loaded,
    store,
    logger: pino({ level: 'silent' }),
    requestStop: () => {},
    ...extra,
  });
  await gw.app.listen({ host: '127.0.0.1', port: 0 });
  await gw.dispatcher.start(`http://127.0.0.1:${gw.app.server.address().port}`);
  gw.close = async () => {
    for (const step of gw.closeSteps) await step.run();
  };
  return gw;
}
