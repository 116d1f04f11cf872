// A move's transaction: the store, the clock reading and the typed emit, in one immediate
// transaction shared by the moves of a group. A group's events are written together at its end
// (one statement on PostgreSQL, which holds the event counter's lock only from there to the
// commit) and reach listeners only after the commit.
import { AppError } from '../../errors.js';
import type { BoardEvent, Emit, NewEvent } from '../model/events.js';
import type { BoardStore, TxHandle, TxTables } from '../store/contract.js';

export type { Clock } from '../../clock.js';
import type { Clock } from '../../clock.js';

/** Where a group's events go once it has committed (the board's event feed, or a bus). */
export interface Publisher {
  publish(events: readonly BoardEvent[]): void;
  /**
   * A group's commit is on its way (true: its events and COMMIT sent), or the group is over,
   * published or not (false): a commit notified meanwhile may be this one (the event feed need
   * not read it back).
   */
  committing?(underWay: boolean): void;
}

/** How the board's last write went: a database that cannot be written is not ready. */
export interface WriteHealth {
  ok: boolean;
  /** Why the last write failed (a full disk, a lock held by another process), or null. */
  error: string | null;
}

/** A group refused by another process's lock is tried again for this long before a 503. */
const BUSY_RETRY_MS = 2000;
const BUSY_BACKOFF_MS = [5, 10, 20, 50, 100, 200];

export interface Tx {
  readonly store: TxTables;
  readonly emit: Emit;
  readonly now: number;
  /** The events of this group not yet written (a move's own, and its group's before it). */
  readonly emitted: readonly NewEvent[];
}

interface Queued {
  /** Its place in the order moves were queued. */
  seq: number;
  fn: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Settled = { ok: true; value: unknown } | { ok: false; err: unknown };

export class Transactor {
  /** Moves waiting for the next group commit. */
  private queued: Queued[] = [];
  /**
   * The moves of a group that failed as a whole, each to be tried again alone, in order, within
   * what is left of the group's time for a lock held elsewhere (`since`).
   */
  private alone: { move: Queued; since: number }[] = [];
  /** A group is being committed (or waits out another process's lock): the next one waits. */
  private committing = false;
  private scheduled = false;
  /** Moves queued so far, and the queue place up to which every move has been answered. */
  private queuedSeq = 0;
  private answeredSeq = 0;
  /** Told once every move up to their place is answered (see idle()). */
  private idleWaiters: { upTo: number; resolve: () => void }[] = [];
  private health: WriteHealth = { ok: true, error: null };

  constructor(
    private readonly store: BoardStore,
    private readonly clock: Clock,
    private readonly publisher: Publisher,
  ) {}

  /**
   * Runs `fn` in the next group commit: the moves queued during one turn of the event loop
   * commit in one transaction (a commit's sync is most of a small move's cost), one move at a
   * time, each in a savepoint of its own, so one that throws is undone and rejected alone; a
   * group that fails as a whole is tried again a move at a time, so that only the move at fault
   * is refused (moves must be safe to run again, as a retry on a busy board runs them again).
   * Resolves once the group has committed, its events published. One group at a time: a move
   * queued meanwhile goes in the next. `fn` must not wait for another move (it would wait for
   * its own group).
   */
  run<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({
        seq: ++this.queuedSeq,
        fn,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.schedule();
    });
  }

  get writeHealth(): WriteHealth {
    return this.health;
  }

  /**
   * Resolves once every move queued so far has committed or been refused (moves queued later do
   * not hold it up): what an answer about a platform, or a stop, waits for.
   */
  idle(): Promise<void> {
    const upTo = this.queuedSeq;
    if (this.answeredSeq >= upTo) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push({ upTo, resolve }));
  }

  private schedule(): void {
    if (this.committing || this.scheduled) return;
    if (this.queued.length === 0 && this.alone.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.committing = true;
      const retried = this.alone.shift();
      if (retried) return void this.commitGroup([retried.move], retried.since, 0);
      const group = this.queued;
      this.queued = [];
      void this.commitGroup(group, performance.now(), 0);
    });
  }

  /**
   * Commits `group`; a group refused by another process's lock is tried again a little later
   * (the event loop goes on meanwhile), for BUSY_RETRY_MS, then refused with a 503.
   */
  private async commitGroup(group: Queued[], since: number, attempt: number): Promise<void> {
    try {
      await this.attemptGroup(group, since, attempt);
    } finally {
      this.publisher.committing?.(false);
    }
  }

  private async attemptGroup(group: Queued[], since: number, attempt: number): Promise<void> {
    const settled: Settled[] = [];
    let written: BoardEvent[];
    // A move alone in its group needs no savepoint: if it throws, the transaction is undone.
    const alone = group.length === 1;
    try {
      ({ written } = await this.inTransaction(async (tx, events, handle) => {
        for (const { fn } of group) {
          const mark = events.length;
          try {
            settled.push({
              ok: true,
              value: alone ? await fn(tx) : await handle.savepoint(() => fn(tx)),
            });
          } catch (err) {
            // A failure SQLite answers by rolling back the whole transaction (a full disk, an
            // I/O error), or a lost connection, takes the group with it: every move is refused.
            if (!handle.open) throw err;
            if (alone) throw new MoveRefused(err);
            // Its events were undone with its savepoint.
            events.length = mark;
            settled.push({ ok: false, err: storageError(this.store, err) });
          }
        }
      }));
    } catch (err) {
      if (err instanceof MoveRefused) {
        // The lone move's own failure, answered as if it had had its savepoint.
        this.done(group);
        group[0]!.reject(storageError(this.store, err.cause));
        return;
      }
      // One move's failure took the others with it (a write PostgreSQL answers only at the end,
      // sent without waiting and its move already over; events that cannot be written). Each
      // move is tried again alone, before the moves queued since, so that only the one at fault
      // is refused. Not for a storage failure: a board that cannot be reached refuses them all,
      // and a lock held elsewhere is waited out by the group as a whole (alone, each move would
      // wait for it again).
      const failure = this.store.failureOf(err);
      if (group.length > 1 && failure === null) {
        this.alone.push(...group.map((move) => ({ move, since })));
        this.committing = false;
        this.schedule();
        return;
      }
      if (failure?.kind === 'busy' && performance.now() - since < BUSY_RETRY_MS) {
        const delay = BUSY_BACKOFF_MS[Math.min(attempt, BUSY_BACKOFF_MS.length - 1)]!;
        setTimeout(() => void this.commitGroup(group, since, attempt + 1), delay);
        return;
      }
      const refused = this.failed(err);
      this.done(group);
      for (const { reject } of group) reject(refused);
      return;
    }
    this.done(group);
    this.publisher.publish(written);
    group.forEach(({ resolve, reject }, i) => {
      const outcome = settled[i]!;
      if (outcome.ok) resolve(outcome.value);
      else reject(outcome.err);
    });
  }

  /** A group was answered: the next one may start, and idle() waiters up to it are told. */
  private done(group: Queued[]): void {
    this.committing = false;
    this.answeredSeq = Math.max(this.answeredSeq, group.at(-1)?.seq ?? 0);
    const waiting = this.idleWaiters;
    this.idleWaiters = waiting.filter((w) => w.upTo > this.answeredSeq);
    for (const w of waiting) if (w.upTo <= this.answeredSeq) w.resolve();
    this.schedule();
  }

  /** One immediate transaction around `body`: what it returned and the events it wrote. */
  private async inTransaction<T>(
    body: (tx: Tx, emitted: NewEvent[], handle: TxHandle) => Promise<T>,
  ): Promise<{ value: T; written: BoardEvent[] }> {
    const emitted: NewEvent[] = [];
    const now = this.clock.wall();
    let ids: number[] = [];
    const value = await this.store.transaction(async (store, handle) => {
      const emit: Emit = (event) => void emitted.push(event);
      const result = await body({ store, emit, now, emitted }, emitted, handle);
      // The events are the transaction's last statement: its commit goes out behind them,
      // and its notification may come before its answer (until commitGroup's end).
      this.publisher.committing?.(true);
      handle.commitAfterNext();
      ids = await store.events.append(emitted, now);
      return result;
    });
    const written = emitted.map((event, i) => ({ ...event, id: ids[i]!, at: now }) as BoardEvent);
    // A commit that wrote something proves the board writable again; an empty one does not.
    if (!this.health.ok && written.length > 0) this.writable();
    return { value, written };
  }

  /** A write went through (a committed change, or readiness's probe). */
  writable(): void {
    this.health = { ok: true, error: null };
  }

  /** A write failed: a storage failure is remembered (readiness) and answered as a 503. */
  private failed(err: unknown): unknown {
    const mapped = storageError(this.store, err);
    if (mapped instanceof AppError && mapped.status === 503)
      this.health = { ok: false, error: mapped.message };
    return mapped;
  }
}

/** A lone move threw, its transaction rolled back: its error, not the group's. */
class MoveRefused extends Error {
  constructor(override readonly cause: unknown) {
    super('the move was refused');
  }
}

/** A storage failure answered as a 503 (the cause kept); any other error as it is. */
function storageError(store: BoardStore, err: unknown): unknown {
  const failure = store.failureOf(err);
  if (failure === null) return err;
  return failure.kind === 'busy'
    ? new AppError('STORAGE_BUSY', failure.message, {
        cause: err,
        headers: { 'retry-after': '1' },
      })
    : new AppError('STORAGE_UNAVAILABLE', failure.message, { cause: err });
}
