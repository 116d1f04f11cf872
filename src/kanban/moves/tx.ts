// A move's transaction: the store, the clock reading and the typed emit, all in one immediate
// SQLite transaction; events reach listeners only after the commit.
import { AppError } from '../../errors.js';
import type { EventBus } from '../event-bus.js';
import type { BoardEvent, Emit } from '../model/events.js';
import type { Store } from '../store/store.js';

export type Clock = () => number;

export interface Tx {
  readonly store: Store;
  readonly emit: Emit;
  readonly now: number;
}

interface Queued {
  fn: (tx: Tx) => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class Transactor {
  /** Moves waiting for the next group commit. */
  private queued: Queued[] = [];

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly bus: EventBus,
  ) {}

  /**
   * Runs `fn` in the next group commit: the moves queued during one turn of the event loop
   * commit in one transaction (a commit's write is most of a small move's cost), each in a
   * savepoint of its own, so one that throws is undone and rejected alone. Resolves once the
   * group has committed, its events published.
   */
  runGrouped<T>(fn: (tx: Tx) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (this.queued.length === 1) setImmediate(() => this.commitGroup());
    });
  }

  private commitGroup(): void {
    const group = this.queued;
    this.queued = [];
    const settled: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    let written: BoardEvent[];
    try {
      ({ written } = this.inTransaction((tx, events) => {
        for (const { fn } of group) {
          const mark = events.length;
          try {
            settled.push({ ok: true, value: this.store.savepoint(() => fn(tx)) });
          } catch (err) {
            // A failure SQLite answers by rolling back the whole transaction (a full disk, an
            // I/O error) takes the group with it: every move of it is refused.
            if (!this.store.inTransaction) throw err;
            // Its events were undone with its savepoint.
            events.length = mark;
            settled.push({ ok: false, err: storageError(err) });
          }
        }
      }));
    } catch (err) {
      for (const { reject } of group) reject(storageError(err));
      return;
    }
    this.bus.publish(written);
    group.forEach(({ resolve, reject }, i) => {
      const outcome = settled[i]!;
      if (outcome.ok) resolve(outcome.value);
      else reject(outcome.err);
    });
  }

  /** Runs `fn` in one immediate transaction and publishes its events after the commit. */
  run<T>(fn: (tx: Tx) => T): T {
    let done: { value: T; written: BoardEvent[] };
    try {
      done = this.inTransaction(fn);
    } catch (err) {
      throw storageError(err);
    }
    this.bus.publish(done.written);
    return done.value;
  }

  /** One immediate transaction around `body`: what it returned and the events it wrote. */
  private inTransaction<T>(body: (tx: Tx, written: BoardEvent[]) => T): {
    value: T;
    written: BoardEvent[];
  } {
    const written: BoardEvent[] = [];
    const now = this.clock();
    const emit: Emit = (event) => {
      const stored = this.store.events.append(event, now);
      written.push(stored);
      return stored;
    };
    const value = this.store.transaction(() => body({ store: this.store, emit, now }, written));
    return { value, written };
  }
}

/** A full or failing disk is the operator's to fix: 503 with a clear message, the cause kept. */
function storageError(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR'))) {
    return new AppError('STORAGE_UNAVAILABLE', `the data dir cannot be written (${code})`, {
      cause: err,
    });
  }
  return err;
}
