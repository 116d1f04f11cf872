// The data dir's mutex: a kernel file lock (via SQLite) that dies with its holder, zombies included.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, ExitError } from './exit-codes.js';

export const LOCK_FILE = 'gatehouse.lock';
/** How long a start waits out a lock that no live instance holds (see tryAcquire). */
export const LOCK_PATIENCE_MS = 250;

/**
 * Holds an exclusive SQLite transaction on the lock file for the life of the instance. The
 * kernel releases it the moment the holder exits (before it is even reaped), so a crashed or
 * zombie owner never blocks a successor, and of two racing starts exactly one gets it.
 */
export class InstanceLock {
  private constructor(private readonly db: Database.Database) {}

  /**
   * The lock, or null while another process holds it. A start that merely reads the file at the
   * same moment (two racing starts both do) holds it for microseconds; `patienceMs` waits that
   * out, or two racing starts can each see the other and both give up.
   */
  static tryAcquire(path: string, patienceMs = 0): InstanceLock | null {
    const db = new Database(path, { timeout: patienceMs });
    try {
      db.exec('BEGIN EXCLUSIVE');
      return new InstanceLock(db);
    } catch (err) {
      db.close();
      const code = (err as { code?: string }).code;
      if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return null;
      throw new ExitError(
        ExitCode.config,
        `${path}: cannot lock the data dir (${(err as Error).message}); if it is not a SQLite file, remove it while no gatehouse runs`,
      );
    }
  }

  release(): void {
    if (this.db.open) this.db.close();
  }
}

/** The lock a daemon holds on its workspaces.root, beside the data dir's. */
export const ROOT_LOCK_FILE = '.gatehouse.lock';

/**
 * The workspaces root, held for the life of the daemon: a second daemon given the same root
 * (with a data dir of its own) would reconcile the first one's live worktrees away as orphans.
 */
export function lockWorkspacesRoot(root: string): InstanceLock {
  mkdirSync(root, { recursive: true });
  const lock = InstanceLock.tryAcquire(join(root, ROOT_LOCK_FILE), LOCK_PATIENCE_MS);
  if (lock) return lock;
  throw new ExitError(
    ExitCode.config,
    `workspaces.root: ${root} is in use by another gatehouse (each daemon needs a root of its own; hosts sharing a board each keep their own)`,
  );
}
