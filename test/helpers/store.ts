// The board's store for a test, on the engine this run tests (GATEHOUSE_TEST_STORE: sqlite, the
// default, or postgres; vitest.config.ts runs the board, API and platform suites on both). A data
// dir keeps its store across a restart: on PostgreSQL, a schema named after the data dir.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll } from 'vitest';
import type { BoardStore } from '../../src/kanban/store/contract.js';
import { openPostgresStore, pgTypes } from '../../src/kanban/store/postgres/open.js';
import { openStore } from '../../src/kanban/store/sqlite/store.js';
import { databaseUrl } from './postgres.js';

export const ENGINE: 'sqlite' | 'postgres' =
  process.env.GATEHOUSE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

const schemas = new Set<string>();

afterAll(async () => {
  if (schemas.size === 0) return;
  const pool = new pg.Pool({ connectionString: databaseUrl(), max: 1 });
  try {
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    schemas.clear();
    await pool.end();
  }
});

/** The PostgreSQL schema a data dir's board lives in. */
export function schemaOf(dataDir: string): string {
  return `t_${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`;
}

/** How to reach the PostgreSQL board of `dataDir` beside its store: its schema, bigints as numbers. */
function connectionTo(dataDir: string): pg.ClientConfig {
  return {
    connectionString: databaseUrl(),
    options: `-c search_path=${schemaOf(dataDir)}`,
    types: pgTypes,
  };
}

/** Opens (creating on first use) the board of `dataDir` on this run's engine. */
export async function openTestStore(dataDir: string): Promise<BoardStore> {
  if (ENGINE === 'sqlite') return openStore(join(dataDir, 'gatehouse.db'));
  const schema = schemaOf(dataDir);
  schemas.add(schema);
  return openPostgresStore({ url: databaseUrl(), schema, poolSize: 4 });
}

/**
 * Runs `sql` (with ? placeholders) on the board of `dataDir` directly, beside its store: to see
 * what is stored, or to try what the schema refuses. Rows as objects, bigints as numbers.
 */
export async function rawQuery(
  dataDir: string,
  sql: string,
  params: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  if (ENGINE === 'sqlite') {
    const db = new Database(join(dataDir, 'gatehouse.db'));
    try {
      const stmt = db.prepare(sql);
      return stmt.reader
        ? (stmt.all(...params) as Record<string, unknown>[])
        : (stmt.run(...params), []);
    } finally {
      db.close();
    }
  }
  let n = 0;
  const client = new pg.Client(connectionTo(dataDir));
  await client.connect();
  try {
    return (
      await client.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      )
    ).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/**
 * Makes the board of `dataDir` refuse every update of `column` in `table` with `message`, as a
 * failing disk would, until the returned function is called.
 */
export async function failUpdates(
  dataDir: string,
  table: string,
  column: string,
  message: string,
): Promise<() => Promise<void>> {
  const name = `fail_${table}_${column}`;
  if (ENGINE === 'sqlite') {
    await rawQuery(
      dataDir,
      `CREATE TRIGGER ${name} BEFORE UPDATE OF ${column} ON ${table}
        BEGIN SELECT RAISE(ABORT, '${message}'); END`,
    );
    return async () => void (await rawQuery(dataDir, `DROP TRIGGER ${name}`));
  }
  await rawQuery(
    dataDir,
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION '${message}'; END $$`,
  );
  await rawQuery(
    dataDir,
    `CREATE TRIGGER ${name} BEFORE UPDATE OF ${column} ON ${table}
      FOR EACH ROW EXECUTE FUNCTION ${name}()`,
  );
  return async () => void (await rawQuery(dataDir, `DROP FUNCTION ${name} CASCADE`));
}

/** Read-only SQL on a board beside its daemon, held open for many queries (a sampler's). */
export interface BoardReader {
  all<R = Record<string, unknown>>(sql: string): Promise<R[]>;
  close(): Promise<void>;
}

/** A reader of the board of `dataDir` on `engine` (PostgreSQL: the schema of storeConfig). */
export function boardReader(engine: 'sqlite' | 'postgres', dataDir: string): BoardReader {
  if (engine === 'sqlite') {
    const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true, timeout: 5000 });
    return {
      all: async <R>(sql: string) => db.prepare(sql).all() as R[],
      close: async () => void db.close(),
    };
  }
  const pool = new pg.Pool({ ...connectionTo(dataDir), max: 1 });
  return {
    all: async <R>(sql: string) => (await pool.query(sql)).rows as R[],
    close: () => pool.end(),
  };
}

/** The `store` a daemon's config names for the board of `dataDir` on `engine`. */
export function storeConfig(engine: 'sqlite' | 'postgres', dataDir: string): object {
  if (engine === 'sqlite') return { kind: 'sqlite' };
  const schema = schemaOf(dataDir);
  schemas.add(schema);
  return { kind: 'postgres', url: databaseUrl(), schema, poolSize: 4 };
}

/**
 * Holds the board of `dataDir` from beside its store, as another process would: SQLite's write
 * lock (BEGIN IMMEDIATE), or on PostgreSQL an exclusive lock of `table`. Until the returned
 * function is called, the board's writes there wait and are refused as busy; reads go on.
 */
export async function holdBoard(dataDir: string, table: string): Promise<() => Promise<void>> {
  if (ENGINE === 'sqlite') {
    const db = new Database(join(dataDir, 'gatehouse.db'));
    db.exec('BEGIN IMMEDIATE');
    return async () => {
      db.exec('ROLLBACK');
      db.close();
    };
  }
  const client = new pg.Client(connectionTo(dataDir));
  await client.connect();
  await client.query('BEGIN');
  // EXCLUSIVE: reads go on, writes wait (as SQLite's reserved lock lets readers read).
  await client.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
  return async () => {
    await client.query('ROLLBACK');
    await client.end();
  };
}
