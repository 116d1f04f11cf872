// The board's storage: one SQLite file behind one object. Nothing outside this folder sees the
// database or writes SQL; a second store (say PostgreSQL) would be another implementation here.
import { openDatabase, type Db } from './db.js';
import { EventStore } from './event-store.js';
import { PlatformStore } from './platform-store.js';
import { RunStore } from './run-store.js';
import { TaskStore } from './task-store.js';
import { TaskWrites, WRITES } from './task-writes.js';

export class Store {
  readonly tasks: TaskStore;
  readonly runs: RunStore;
  readonly events: EventStore;
  readonly platforms: PlatformStore;
  /** Only the moves import WRITES, so only they can reach this. */
  readonly [WRITES]: TaskWrites;
  private readonly runInTransaction;
  private readonly probe;

  constructor(private readonly db: Db) {
    this.tasks = new TaskStore(db);
    this.runs = new RunStore(db);
    this.events = new EventStore(db);
    this.platforms = new PlatformStore(db);
    this[WRITES] = new TaskWrites(db);
    this.runInTransaction = db.transaction((body: () => unknown) => body());
    this.probe = db.prepare('INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)');
  }

  /**
   * From now on a write never waits for another process's lock (an operator's sqlite3, a
   * backup): the wait would freeze the event loop. It fails at once and the transactor answers
   * for it. Until then (opening, migrating, adopting at start) a short lock is waited out.
   */
  serving(): void {
    this.db.pragma('busy_timeout = 0');
  }

  /** A real write of one row, to learn whether the board can be written (readiness). */
  probeWrite(at: number): void {
    this.probe.run(at);
  }

  /** Runs `fn` in one immediate transaction; `fn` must not await. */
  transaction<T>(fn: () => T): T {
    return this.runInTransaction.immediate(fn) as T;
  }

  /**
   * Inside a transaction: runs `fn` in a savepoint, undone alone if `fn` throws. Outside one
   * (SQLite rolled it back) it would commit on its own: check inTransaction after a failure.
   */
  savepoint<T>(fn: () => T): T {
    return this.runInTransaction(fn) as T;
  }

  /** A transaction is open (SQLite rolls one back by itself on a full disk or an I/O error). */
  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  get open(): boolean {
    return this.db.open;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** Opens (creating and migrating as needed) the board at `path`. */
export function openStore(
  path: string,
  opts: { migrateTo?: number; onRepair?: (note: string) => void } = {},
): Store {
  return new Store(openDatabase(path, opts));
}
