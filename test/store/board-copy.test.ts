// `gatehouse board copy`: a real SQLite board moved into a real PostgreSQL, row for row, with
// its ids; a non-empty target refused; a copy killed half-way leaves nothing.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BoardStore } from '../../src/kanban/store/contract.js';
import { openPostgresStore } from '../../src/kanban/store/postgres/open.js';
import { openStore } from '../../src/kanban/store/sqlite/store.js';
import { api, startGateway } from '../helpers/app.js';
import { claim } from '../helpers/board.js';
import { BIN, ROOT, cleanEnv, runCli } from '../helpers/daemon.js';
import { signedHeaders, webhookReceiver } from '../helpers/doubles.js';
import { testSchema } from '../helpers/postgres.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';

/** A board with something in every table, written by the real gateway; its file's path. */
async function busyBoard(): Promise<string> {
  const receiver = await webhookReceiver();
  const gw = await startGateway({
    workers: { maxConcurrent: 0 },
    schedules: { nightly: { cron: '0 3 * * *', task: { title: 'nightly' } } },
    platforms: [
      { name: 'ops', type: 'webhook', options: { url: receiver.url, secret: receiver.secret } },
    ],
  });
  const body = JSON.stringify({ channel: 'room', text: '/task from the chat' });
  const inbound = await api(gw.url, 'POST', '/platform/ops/inbound', body, {
    ...signedHeaders(receiver.secret, body),
  });
  expect(inbound.status).toBe(202);
  const parent = (await api(gw.url, 'POST', '/tasks', { title: 'parent', priority: 3 })).body;
  await api(gw.url, 'POST', '/tasks', { title: 'child', parents: [parent.id] });
  const done = await claim(gw.kanban.board, gw.dataDir, parent.id);
  await gw.kanban.worker.complete(parent.id, done.token, { summary: 'ok', result: { n: 1 } });
  const doomed = (await api(gw.url, 'POST', '/tasks', { title: 'doomed' })).body;
  await api(gw.url, 'POST', `/tasks/${doomed.id}/archive`);
  await api(gw.url, 'DELETE', `/tasks/${doomed.id}`);
  const running = (await api(gw.url, 'POST', '/tasks', { title: 'running' })).body;
  await claim(gw.kanban.board, gw.dataDir, running.id);
  await api(gw.url, 'POST', `/tasks/${running.id}/comments`, { text: 'a note', author: 'me' });
  await api(gw.url, 'POST', '/tasks', { title: 'emoji 😀 and "quotes"', body: 'x\ny' });
  await api(gw.url, 'POST', '/tasks', { title: 'on a budget', budget: { runs: 3 } });
  await api(gw.url, 'POST', '/tasks', { title: 'keyed' }, { 'idempotency-key': 'moved-key' });
  await api(gw.url, 'POST', '/schedules/nightly/run');
  await api(gw.url, 'POST', '/schedules/nightly/pause');
  await gw.close();
  return join(gw.dataDir, 'gatehouse.db');
}

const KEYS: Record<string, string> = {
  tasks: 'seq',
  task_parents: 'task_id, parent_id',
  runs: 'seq',
  events: 'id',
  comments: 'id',
  subscriptions: 'platform, channel, task_id',
  platform_state: 'name',
  inbound_deliveries: 'platform, delivery_id',
  idempotency_keys: 'key',
  schedules: 'name',
};

/** A PostgreSQL row as SQLite gives it: bigints (strings in pg) as numbers, booleans as 0/1. */
function likeSqlite(row: Record<string, unknown>, as: Record<string, unknown> | undefined) {
  // PostgreSQL's own columns (task_parents.ord, SQLite's rowid) are not compared.
  return Object.fromEntries(
    Object.entries(row)
      .filter(([k]) => as === undefined || k in as)
      .map(([k, v]) => [
        k,
        typeof v === 'boolean'
          ? Number(v)
          : typeof v === 'string' && typeof as?.[k] === 'number'
            ? Number(v)
            : v,
      ]),
  );
}

describe('gatehouse board copy', () => {
  it('moves every row of every table with its ids, prints the verified counts, and refuses to copy twice', async () => {
    const from = await busyBoard();
    const { pool, schema, url } = testSchema();
    const copied = await runCli([
      'board',
      'copy',
      '--from',
      from,
      '--to',
      url,
      '--schema',
      schema,
      '--json',
    ]);
    expect(copied.stderr).toBe('');
    expect(copied.code).toBe(0);
    const report = JSON.parse(copied.stdout);
    const sqlite = new Database(from, { readonly: true });
    for (const [table, key] of Object.entries(KEYS)) {
      const want = sqlite.prepare(`SELECT * FROM ${table} ORDER BY ${key}`).all() as Record<
        string,
        unknown
      >[];
      const got = (await pool.query(`SELECT * FROM "${schema}".${table} ORDER BY ${key}`)).rows;
      expect({ table, rows: got.map((r, i) => likeSqlite(r, want[i])) }).toEqual({
        table,
        rows: want,
      });
      expect(report.copied[table]).toBe(want.length);
    }
    expect(report.copied.tasks).toBeGreaterThan(4);
    expect(report.copied.events).toBeGreaterThan(10);
    // The next event id goes on from the source's, past the ids of the deleted task's events.
    const highWater = (
      sqlite.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").get() as {
        seq: number;
      }
    ).seq;
    const counter = await pool.query(`SELECT last FROM "${schema}".event_counter`);
    expect(Number(counter.rows[0].last)).toBe(highWater);
    sqlite.close();

    const again = await runCli(['board', 'copy', '--from', from, '--to', url, '--schema', schema]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /already holds \d+ tasks, \d+ runs and \d+ events.*nothing was written/,
    );
    const tasks = await pool.query(`SELECT count(*) AS n FROM "${schema}".tasks`);
    expect(Number(tasks.rows[0].n)).toBe(report.copied.tasks);
  });

  it('leaves the target empty when killed half-way, and then copies on the next try', async () => {
    const from = await busyBoard();
    // Enough events that the copy is caught in the middle of its transaction.
    const db = new Database(from);
    const insert = db.prepare(
      "INSERT INTO events (task_id, run_id, kind, payload, at) VALUES (NULL, NULL, 'commented', '{}', 1)",
    );
    db.transaction(() => {
      for (let i = 0; i < 60_000; i++) insert.run();
    })();
    db.close();
    const { pool, schema, url } = testSchema();
    const copy = spawnTracked(
      [process.execPath, BIN, 'board', 'copy', '--from', from, '--to', url, '--schema', schema],
      { cwd: ROOT, env: cleanEnv() },
    );
    await waitFor(
      'the copy inside its transaction',
      async () => {
        const { rows } = await pool.query(
          "SELECT 1 FROM pg_stat_activity WHERE query LIKE '%jsonb_populate_recordset%' AND xact_start IS NOT NULL AND pid <> pg_backend_pid()",
        );
        return rows.length > 0;
      },
      30_000,
      5,
    );
    copy.child.kill('SIGKILL');
    await copy.exited;
    await waitFor('the killed copy’s transaction to end', async () => {
      const { rows } = await pool.query(
        "SELECT 1 FROM pg_stat_activity WHERE query LIKE '%jsonb_populate_recordset%' AND pid <> pg_backend_pid()",
      );
      return rows.length === 0;
    });
    for (const table of Object.keys(KEYS)) {
      const { rows } = await pool.query(`SELECT count(*) AS n FROM "${schema}".${table}`);
      expect({ table, n: Number(rows[0].n) }).toEqual({ table, n: 0 });
    }
    const retried = await runCli([
      'board',
      'copy',
      '--from',
      from,
      '--to',
      url,
      '--schema',
      schema,
      '--json',
    ]);
    expect(retried.code).toBe(0);
    expect(JSON.parse(retried.stdout).copied.events).toBeGreaterThan(60_000);
  });

  it('says what is wrong with its arguments and writes nothing', async () => {
    const { url } = testSchema();
    const missing = await runCli(['board', 'copy', '--to', url]);
    expect(missing.code).toBe(64);
    const nofile = await runCli([
      'board',
      'copy',
      '--from',
      '/nonexistent/gatehouse.db',
      '--to',
      url,
    ]);
    expect(nofile.code).toBe(1);
    expect(nofile.stderr).toContain('--from /nonexistent/gatehouse.db: no such file');
    const from = await busyBoard();
    const mysql = await runCli(['board', 'copy', '--from', from, '--to', 'mysql://x@127.0.0.1/db']);
    expect(mysql.code).toBe(1);
    expect(mysql.stderr).toContain('expected a postgres:// URL');
    const schema = await runCli([
      'board',
      'copy',
      '--from',
      from,
      '--to',
      url,
      '--schema',
      'Bad-Name',
    ]);
    expect(schema.code).toBe(1);
    expect(schema.stderr).toContain('lower-case letters, digits and _ only');
    const closed = await runCli([
      'board',
      'copy',
      '--from',
      from,
      '--to',
      'postgres://u:secret@127.0.0.1:1/db',
    ]);
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(/cannot connect/);
    expect(closed.stderr).not.toContain('secret');
  });

  it('serves the same answers from the copy as from the file, for every task', async () => {
    const from = await busyBoard();
    const { schema, url } = testSchema();
    expect(
      (await runCli(['board', 'copy', '--from', from, '--to', url, '--schema', schema])).code,
    ).toBe(0);
    const sqlite = openStore(from);
    const postgres = await openPostgresStore({ url, schema, poolSize: 2 });
    try {
      const answers = async (store: BoardStore) => {
        const tasks = (await store.tasks.list({ order: 'asc', afterSeq: null, limit: 1000 })).tasks;
        const perTask = [];
        for (const t of tasks)
          perTask.push({
            task: await store.tasks.get(t.id),
            runs: await store.runs.forTask(t.id),
            events: await store.events.listForTask(t.id, 0, 1000),
            subscriptions: await store.platforms.subscriptionsOf(t.id),
          });
        return {
          perTask,
          counts: await store.tasks.counts(),
          events: await store.events.list(0, 10_000),
          highWater: await store.events.highWater(),
          platform: await store.platforms.state('ops'),
          open: await store.tasks.open(100),
        };
      };
      const want = await answers(sqlite);
      expect(want.perTask.length).toBeGreaterThan(4);
      expect(await answers(postgres)).toEqual(want);
    } finally {
      await sqlite.close();
      await postgres.close();
    }
  });
});
