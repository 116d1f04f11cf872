// What the board needs of a store, whichever engine holds it (SQLite embedded, PostgreSQL for
// many hosts). The SQLite classes define the shape of each table's reads and writes; the
// PostgreSQL ones implement the same. Everything outside this folder sees only these types.
import type { EventStore } from './sqlite/event-store.js';
import type { HoldStore } from './sqlite/hold-store.js';
import type { HostStore } from './sqlite/host-store.js';
import type { IdempotencyStore } from './sqlite/idempotency-store.js';
import type { PlatformStore } from './sqlite/platform-store.js';
import type { RunStore } from './sqlite/run-store.js';
import type { TaskStore } from './sqlite/task-store.js';
import type { TaskWrites, WRITES } from './sqlite/task-writes.js';

/** The public members of an engine's class: what the other engine must offer too. */
type Shape<T> = { [K in keyof T]: T[K] };

export type TaskReads = Shape<TaskStore>;
export type RunTable = Shape<RunStore>;
export type EventTable = Shape<EventStore>;
export type PlatformTable = Shape<PlatformStore>;
export type HostTable = Shape<HostStore>;
export type IdempotencyTable = Shape<IdempotencyStore>;
export type HoldTable = Shape<HoldStore>;
export type TaskWriter = Shape<TaskWrites>;

/** The board's tables, read outside any transaction: committed rows only. */
export interface Tables {
  readonly tasks: TaskReads;
  readonly runs: RunTable;
  readonly events: EventTable;
  readonly platforms: PlatformTable;
  readonly hosts: HostTable;
  readonly idempotency: IdempotencyTable;
  readonly holds: HoldTable;
}

/** The tables as a transaction sees and writes them. */
export interface TxTables extends Tables {
  /** Only the moves import WRITES, so only they can reach this. */
  readonly [WRITES]: TaskWriter;
  /** A real write of one row, to learn whether the board can be written (readiness). */
  probeWrite(at: number): Promise<void>;
}

/** A failure of the storage itself, as the API answers it. */
export interface StorageFailure {
  /** busy: another process holds a lock (retried, then 503 STORAGE_BUSY); unavailable: 503. */
  kind: 'busy' | 'unavailable';
  message: string;
}

/** One open transaction, as its runner (the transactor) controls it. */
export interface TxHandle {
  /**
   * Runs `fn` in a savepoint, undone alone if `fn` throws. A failure that ended the whole
   * transaction is thrown as it is: check `open` after a failure.
   */
  savepoint<T>(fn: () => Promise<T>): Promise<T>;
  /** The transaction is still open (a full disk, an I/O error or a lost connection ends one). */
  readonly open: boolean;
  /**
   * The next statement sent is the transaction's last: its commit may go out right behind it,
   * rather than after its answer (PostgreSQL sends it in the same round trip; SQLite has
   * nothing to do). Only once that statement has been handed to the connection: a move
   * whose last statement throws before it is sent commits nothing.
   */
  commitAfterNext(): void;
}

export interface BoardStore extends Tables {
  /**
   * Runs `fn` in one transaction on a connection of its own and commits it. The caller (the
   * transactor) runs one at a time.
   */
  transaction<T>(fn: (tx: TxTables, handle: TxHandle) => Promise<T>): Promise<T>;
  readonly open: boolean;
  /**
   * Other hosts may share this board (PostgreSQL): leases are enforced, and a run is this
   * daemon's only when it proves so. On SQLite the instance lock makes every run this host's.
   */
  readonly shared: boolean;
  /**
   * Calls `onChange` soon after another host commits events (a shared store; a store of one
   * host has no one else to hear from), with the newest event id that commit took, or null when
   * it is not known (a wake-up after the watch was opened again). Failures of the watching go to
   * `onError` while it recovers by itself. Returns how to stop watching.
   */
  watch(
    onChange: (upTo: number | null) => void,
    onError: (err: unknown) => void,
  ): () => Promise<void>;
  /** From now on a write never waits for another process's lock (see each engine). */
  serving(): void;
  /** What a storage error means for the API, or null for any other error. */
  failureOf(err: unknown): StorageFailure | null;
  close(): Promise<void>;
}
