// The one way to open the board's SQLite file: WAL, foreign keys, busy timeout, migrations.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

/** A database that cannot be opened or upgraded; the file is never recreated or overwritten. */
export class DatabaseError extends Error {
  constructor(
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${path}: ${message}`, options);
    this.name = 'DatabaseError';
  }
}

interface BrokenReference {
  table: string;
  rowid: number;
  parent: string;
}

/**
 * Rows an older version left pointing at rows that are gone (a parent link to a deleted task,
 * say) are dropped before an upgrade, each said in a note: an upgrade refused over them would
 * leave the board unusable. A child left waiting on nothing is promoted by migration 4.
 */
function dropDanglingReferences(db: Db, note: (text: string) => void): void {
  const broken = db.pragma('foreign_key_check') as BrokenReference[];
  const notes: string[] = [];
  db.transaction(() => {
    for (const { table, rowid, parent } of broken) {
      // Table names come from SQLite's own report of this schema, never from input.
      const row = db.prepare(`SELECT * FROM "${table}" WHERE rowid = ?`).get(rowid);
      db.prepare(`DELETE FROM "${table}" WHERE rowid = ?`).run(rowid);
      notes.push(
        `dropped a ${table} row that names a missing ${parent} row: ${JSON.stringify(row)}`,
      );
    }
  }).immediate();
  // Said once dropped, before the migrations run: a migration that fails must not hide them.
  for (const text of notes) note(text);
}

/**
 * The connections' page caches (better-sqlite3 makes each 16 MiB; the board's pages stay in the
 * system's file cache anyway). The writer's, 2 MiB (SQLite's own default), holds what a move
 * touches; at 16 MiB it kept the pages of the start's integrity check, 27 MiB of a daemon's
 * memory with a 100,000-task board. The reader's, 8 MiB, holds the indexes a list or a count
 * walks on such a board (2 MiB made GET /tasks?limit=100 twice as slow there).
 */
const WRITER_CACHE = 'cache_size = -2048';
const READER_CACHE = 'cache_size = -8192';

/**
 * Applies every migration above the file's user_version, all in one transaction: an upgrade
 * that fails leaves the board as the version before had it (which can still run it), and a new
 * board is made with one sync, not one per migration. Foreign keys are off meanwhile (a table
 * rebuild drops and renames a referenced table, which would otherwise cascade) and every
 * reference is checked after each migration. `note` is told of every row it had to repair.
 */
export function migrate(
  db: Db,
  upTo = MIGRATIONS.length,
  note: (text: string) => void = () => undefined,
): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `schema version ${current} is newer than this gatehouse knows (${MIGRATIONS.length})`,
    );
  }
  db.pragma('foreign_keys = OFF');
  if (current > 0 && current < upTo) dropDanglingReferences(db, note);
  db.transaction(() => {
    for (let version = current; version < upTo; version++) {
      db.exec(MIGRATIONS[version]!);
      const broken = db.pragma('foreign_key_check') as unknown[];
      if (broken.length > 0)
        throw new Error(`migration ${version + 1} broke ${broken.length} references`);
    }
    if (upTo > current) db.pragma(`user_version = ${upTo}`);
  }).immediate();
  db.pragma('foreign_keys = ON');
}

export function openDatabase(
  path: string,
  opts: { migrateTo?: number; onRepair?: (note: string) => void } = {},
): Db {
  const existed = existsSync(path);
  let db: Db | undefined;
  try {
    db = new Database(path, { timeout: 5000 });
    db.pragma(WRITER_CACHE);
    db.pragma('journal_mode = WAL');
    // FULL: every commit syncs the WAL before it returns, so an answered write survives a power
    // loss (NORMAL could lose the last transactions). Group commit pays the sync once per group.
    db.pragma('synchronous = FULL');
    if (existed) {
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`integrity check failed: ${String(check)}`);
    }
    migrate(db, opts.migrateTo, opts.onRepair);
    return db;
  } catch (err) {
    db?.close();
    throw new DatabaseError(path, `cannot open the board database (${(err as Error).message})`, {
      cause: err,
    });
  }
}

/**
 * A second connection to an open board for reads only: it sees committed rows, never those of
 * a transaction still open on the writer. Opened after openDatabase (which made the file WAL).
 */
export function openReader(path: string): Db {
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true, timeout: 1000 });
    db.pragma(READER_CACHE);
    return db;
  } catch (err) {
    throw new DatabaseError(path, `cannot open the board database (${(err as Error).message})`, {
      cause: err,
    });
  }
}
