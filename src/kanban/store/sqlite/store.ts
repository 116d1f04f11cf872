// The board's storage on SQLite: a writer connection that only transactions use, one at a time,
// and a reader connection for everything else, which sees only committed rows (WAL). A move
// awaits between its statements, so a read from elsewhere can come while a transaction is
// open: on the writer it would see rows that may yet be rolled back. Nothing outside this
// folder sees the database or writes SQL.
import type { BoardStore, StorageFailure, TxHandle, TxTables } from '../contract.js';
import { openDatabase, openReader, type Db } from './db.js';
import { EventStore } from './event-store.js';
import { HoldStore } from './hold-store.js';
import { ScheduleStore } from './schedule-store.js';
import { HostStore } from './host-store.js';
import { IdempotencyStore } from './idempotency-store.js';
import { PlatformStore } from './platform-store.js';
import { RunStore } from './run-store.js';
import { TaskStore } from './task-store.js';
import { WRITES } from '../records/task-writes.js';
import { TaskWrites } from './task-writes.js';

/** The board's tables, read through one connection. */
export class Tables {
  readonly tasks: TaskStore;
  readonly runs: RunStore;
  readonly events: EventStore;
  readonly platforms: PlatformStore;
  readonly hosts: HostStore;
  readonly idempotency: IdempotencyStore;
  readonly holds: HoldStore;
  readonly schedules: ScheduleStore;

  constructor(db: Db) {
    this.tasks = new TaskStore(db);
    this.runs = new RunStore(db);
    this.events = new EventStore(db);
    this.platforms = new PlatformStore(db);
    this.hosts = new HostStore(db);
    this.idempotency = new IdempotencyStore(db);
    this.holds = new HoldStore(db);
    this.schedules = new ScheduleStore(db);
  }
}

/** The tables as a transaction sees and writes them. */
class TxStore extends Tables implements TxTables {
  /** Only the moves import WRITES, so only they can reach this. */
  readonly [WRITES]: TaskWrites;
  private readonly probe;

  constructor(db: Db) {
    super(db);
    this[WRITES] = new TaskWrites(db);
    this.probe = db.prepare('INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)');
  }

  /** A real write of one row, to learn whether the board can be written (readiness). */
  async probeWrite(at: number): Promise<void> {
    this.probe.run(at);
  }
}

export class Store extends Tables implements BoardStore {
  private readonly tx: TxStore;
  private readonly control: TxHandle;

  constructor(
    private readonly writer: Db,
    private readonly reader: Db,
  ) {
    super(reader);
    this.tx = new TxStore(writer);
    this.control = transactionControl(writer);
  }

  /**
   * From now on a write never waits for another process's lock (an operator's sqlite3, a
   * backup): the wait would freeze the event loop. It fails at once and the transactor answers
   * for it. Until then (opening, migrating, adopting at start) a short lock is waited out.
   */
  serving(): void {
    this.writer.pragma('busy_timeout = 0');
  }

  /**
   * Runs `fn` in one immediate transaction on the writer connection. The caller (the
   * transactor) runs one at a time.
   */
  async transaction<T>(fn: (store: TxTables, handle: TxHandle) => Promise<T>): Promise<T> {
    this.writer.exec('BEGIN IMMEDIATE');
    try {
      const value = await fn(this.tx, this.control);
      this.writer.exec('COMMIT');
      return value;
    } catch (err) {
      // SQLite may have rolled it back already (a full disk, an I/O error).
      if (this.writer.inTransaction) this.writer.exec('ROLLBACK');
      throw err;
    }
  }

  get open(): boolean {
    return this.writer.open;
  }

  readonly shared = false;

  /** No other host writes this board: the transactor publishes every commit itself. */
  watch(): () => Promise<void> {
    return async () => undefined;
  }

  /** A full or failing disk is the operator's to fix; a lock held by another process goes away. */
  failureOf(err: unknown): StorageFailure | null {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return null;
    if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR'))
      return { kind: 'unavailable', message: `the data dir cannot be written (${code})` };
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
      return {
        kind: 'busy',
        message: `the board database is locked by another process (an open sqlite3 shell or a backup?); nothing was changed, try again (${code})`,
      };
    return null;
  }

  async close(): Promise<void> {
    if (this.reader.open) this.reader.close();
    if (this.writer.open) this.writer.close();
  }
}

/** Opens (creating and migrating as needed) the board at `path`. */
export function openStore(
  path: string,
  opts: { migrateTo?: number; onRepair?: (note: string) => void } = {},
): Store {
  const writer = openDatabase(path, opts);
  try {
    return new Store(writer, openReader(path));
  } catch (err) {
    writer.close();
    throw err;
  }
}

/** The open transaction's control: SQLite rolls one back by itself on a full disk or an I/O error. */
function transactionControl(writer: Db): TxHandle {
  let savepoints = 0;
  return {
    commitAfterNext() {},
    async savepoint<T>(fn: () => Promise<T>): Promise<T> {
      const name = `move${++savepoints}`;
      writer.exec(`SAVEPOINT ${name}`);
      try {
        const value = await fn();
        writer.exec(`RELEASE ${name}`);
        return value;
      } catch (err) {
        if (writer.inTransaction) writer.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
        throw err;
      }
    },
    get open() {
      return writer.inTransaction;
    },
  };
}
