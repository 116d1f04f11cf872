// The board's schema on PostgreSQL: the same constraints as SQLite's, versioned the same way,
// and event ids strictly increasing in the order transactions commit.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/kanban/store/sqlite/db.js';
import { appendEvents } from '../../src/kanban/store/postgres/events.js';
import { PG_MIGRATIONS } from '../../src/kanban/store/postgres/migrations.js';
import { migratePostgres, SchemaTooNewError } from '../../src/kanban/store/postgres/schema.js';
import { tempDir } from '../helpers/daemon.js';
import { testSchema } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';

/** Tasks as an older version or a bug might write them; `ok` says whether the board takes it. */
const ROWS: { what: string; ok: boolean; row: Record<string, unknown> }[] = [
  { what: 'a ready task', ok: true, row: { status: 'ready' } },
  { what: 'a ready task cooling down', ok: true, row: { status: 'ready', not_before: 5 } },
  {
    what: 'a running task with its run and lease',
    ok: true,
    row: { status: 'running', current_run_id: 'r_000000000001', lease_expires_at: 9 },
  },
  {
    what: 'a running task without a run',
    ok: false,
    row: { status: 'running', lease_expires_at: 9 },
  },
  {
    what: 'a running task without a lease',
    ok: false,
    row: { status: 'running', current_run_id: 'r_000000000001' },
  },
  { what: 'a done task holding a lease', ok: false, row: { status: 'done', lease_expires_at: 9 } },
  { what: 'a done task with a run', ok: false, row: { status: 'done', current_run_id: 'r_1' } },
  { what: 'a blocked task without a reason', ok: false, row: { status: 'blocked' } },
  { what: 'a blocked task with a reason', ok: true, row: { status: 'blocked', block_reason: 'x' } },
  { what: 'a todo task cooling down', ok: false, row: { status: 'todo', not_before: 5 } },
  {
    what: 'a done task with a heartbeat',
    ok: false,
    row: { status: 'done', last_heartbeat_at: 1 },
  },
  { what: 'an unknown status', ok: false, row: { status: 'sleeping' } },
];

function taskRow(i: number, extra: Record<string, unknown>) {
  return {
    id: `t_${String(i).padStart(12, '0')}`,
    title: 'x',
    created_at: 1,
    updated_at: 1,
    origin: '{"kind":"api"}',
    ...extra,
  };
}

describe('the board on PostgreSQL', () => {
  it('takes and refuses exactly the task rows SQLite takes and refuses', async () => {
    const { pool, schema } = testSchema();
    const client = await pool.connect();
    try {
      expect(await migratePostgres(client, schema)).toBe(PG_MIGRATIONS.length);
    } finally {
      client.release();
    }
    const sqlite = openDatabase(join(tempDir(), 'gatehouse.db'));
    const verdicts = { sqlite: [] as boolean[], postgres: [] as boolean[] };
    for (const [i, { row }] of ROWS.entries()) {
      const r = taskRow(i, row);
      const cols = Object.keys(r);
      try {
        sqlite
          .prepare(
            `INSERT INTO tasks (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`,
          )
          .run(r);
        verdicts.sqlite.push(true);
      } catch {
        verdicts.sqlite.push(false);
      }
      try {
        await pool.query(
          `INSERT INTO "${schema}".tasks (${cols.join(', ')}) VALUES (${cols.map((_, j) => `$${j + 1}`).join(', ')})`,
          Object.values(r),
        );
        verdicts.postgres.push(true);
      } catch (err) {
        expect((err as { code?: string }).code).toBe('23514'); // check_violation
        verdicts.postgres.push(false);
      }
    }
    sqlite.close();
    const expected = ROWS.map((r) => r.ok);
    expect(verdicts).toEqual({ sqlite: expected, postgres: expected });
  });

  it('migrates once when hosts start together, and refuses a schema newer than it knows', async () => {
    const { pool, schema } = testSchema(6);
    const clients = await Promise.all(Array.from({ length: 4 }, () => pool.connect()));
    try {
      const versions = await Promise.all(clients.map((c) => migratePostgres(c, schema)));
      expect(versions).toEqual(versions.map(() => PG_MIGRATIONS.length));
      await pool.query(
        `UPDATE "${schema}".schema_version SET version = ${PG_MIGRATIONS.length + 1}`,
      );
      await expect(migratePostgres(clients[0]!, schema)).rejects.toThrow(SchemaTooNewError);
      await expect(migratePostgres(clients[0]!, schema)).rejects.toThrow(
        /newer than this gatehouse knows/,
      );
    } finally {
      for (const c of clients) c.release();
    }
  });

  it('an upgrade that fails part of the way leaves the schema as the older version had it', async () => {
    const { pool, schema } = testSchema(1);
    const client = await pool.connect();
    try {
      // Migration 3 adds runs.host: it fails there, after migration 2 (task_parents.ord) ran.
      const addsHost = PG_MIGRATIONS.findIndex((m) => m.includes('runs ADD COLUMN host text'));
      const addsOrd = PG_MIGRATIONS.findIndex((m) => m.includes('task_parents ADD COLUMN ord'));
      expect(addsOrd).toBe(addsHost - 1);
      expect(await migratePostgres(client, schema, addsOrd)).toBe(addsOrd);
      await client.query(`ALTER TABLE "${schema}".runs ADD COLUMN host text`);
      await expect(migratePostgres(client, schema)).rejects.toThrow(/"host" .*already exists/);
      const version = await client.query(`SELECT version FROM "${schema}".schema_version`);
      expect(version.rows).toEqual([{ version: addsOrd }]);
      const ord = await client.query(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'task_parents' AND column_name = 'ord'",
        [schema],
      );
      expect(ord.rowCount).toBe(0);
    } finally {
      client.release();
    }
  });

  it('gives event ids in commit order: a transaction that asked first commits first', async () => {
    const { pool, schema } = testSchema();
    const setup = await pool.connect();
    await migratePostgres(setup, schema);
    setup.release();
    const [first, second] = [await pool.connect(), await pool.connect()];
    const event = (kind: string) => ({ taskId: null, runId: null, kind, payload: '{}', at: 1 });
    try {
      await first.query('BEGIN');
      await second.query('BEGIN');
      const ids1 = await appendEvents(first, schema, [event('a'), event('b')]);
      // The second writer waits for the first to end rather than taking an id past it and
      // committing first, which a reader resuming after the later id would never see.
      const backend = (await second.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      let secondIds: number[] | null = null;
      const pending = appendEvents(second, schema, [event('c')]).then((ids) => (secondIds = ids));
      await waitFor('the second writer to wait for the first', async () => {
        const { rows } = await pool.query(
          'SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1',
          [backend],
        );
        return rows[0]?.wait_event_type === 'Lock';
      });
      expect(secondIds).toBeNull();
      const seen = await pool.query(`SELECT id FROM "${schema}".events ORDER BY id`);
      expect(seen.rows).toEqual([]);
      await first.query('COMMIT');
      await pending;
      expect(ids1).toEqual([1, 2]);
      expect(secondIds).toEqual([3]);
      // A reader that saw the first commit resumes after 2 and misses nothing.
      await second.query('COMMIT');
      const after = await pool.query(`SELECT id, kind FROM "${schema}".events WHERE id > 2`);
      expect(after.rows).toEqual([{ id: '3', kind: 'c' }]);

      // A transaction that rolls back gives its ids back: still no gap a reader could fall in.
      await first.query('BEGIN');
      await appendEvents(first, schema, [event('undone')]);
      await first.query('ROLLBACK');
      await second.query('BEGIN');
      expect(await appendEvents(second, schema, [event('d')])).toEqual([4]);
      await second.query('COMMIT');
    } finally {
      first.release();
      second.release();
    }
  });
});
