// `gatehouse board backup FILE`: a consistent copy of a live SQLite board, taken through
// SQLite's online backup while the daemon keeps writing (docs/operations.md).
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

export class BackupError extends Error {}

export interface BackupResult {
  from: string;
  to: string;
  bytes: number;
  tasks: number;
  runs: number;
  events: number;
}

/**
 * Copies the board at `from` into `to` (never over a file there): written beside it under a
 * temporary name, checked (`integrity_check`), then renamed, so that `to` is whole or absent.
 */
export async function backupBoard(from: string, to: string): Promise<BackupResult> {
  if (!existsSync(from)) throw new BackupError(`${from}: no board there`);
  if (existsSync(to)) throw new BackupError(`${to} exists: a backup never overwrites a file`);
  if (!existsSync(dirname(to))) throw new BackupError(`${dirname(to)}: no such directory`);
  const partial = join(
    dirname(to),
    `.${randomBytes(6).toString('hex')}-${process.pid}.gatehouse-backup`,
  );
  // A connection of its own that only reads: the daemon's writes go on meanwhile (WAL), and a
  // write between two steps of the copy starts it again, so the copy is one moment's board.
  const source = new Database(from, { readonly: true, fileMustExist: true, timeout: 5000 });
  try {
    await source.backup(partial, {
      // All the remaining pages in one step after the first: a busy board is copied whole
      // between two of its writes rather than restarted page batch after page batch.
      progress: () => 1_000_000_000,
    });
    const copy = new Database(partial, { readonly: true });
    let counts: { tasks: number; runs: number; events: number };
    try {
      const check = copy.pragma('integrity_check', { simple: true });
      if (check !== 'ok')
        throw new BackupError(`the copy failed its integrity check: ${String(check)}`);
      const count = (table: string) =>
        (copy.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      counts = { tasks: count('tasks'), runs: count('runs'), events: count('events') };
    } finally {
      copy.close();
    }
    rmSync(`${partial}-wal`, { force: true });
    rmSync(`${partial}-shm`, { force: true });
    renameSync(partial, to);
    const bytes = statSync(to).size;
    return { from, to, bytes, ...counts };
  } catch (err) {
    rmSync(partial, { force: true });
    if (err instanceof BackupError) throw err;
    throw new BackupError(`${from}: the backup failed: ${(err as Error).message}`, { cause: err });
  } finally {
    source.close();
  }
}
