// The board service: reading tasks, runs and events, and the operator's plain moves (create,
// edit, delete, comment); every change goes through a move in one transaction.
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors.js';
import { EventBus } from './event-bus.js';
import { EventFeed } from './event-feed.js';
import type { Comment, Host, Origin, Task, TaskStatus } from './model/types.js';
import type { HostRenewal } from './store/records/host.js';
import { addComment } from './moves/comment.js';
import { followUp } from './moves/follow-up.js';
import { approveTask, requestChanges } from './moves/review.js';
import { approveRun } from './moves/approval.js';
import { answerQuestion } from './moves/asks.js';
import { once, replayOf, type Answer, type KeyedRequest } from './moves/once.js';
import { createTask, type TaskInput } from './moves/create-task.js';
import { startAttempts, type AttemptsRequest } from './moves/attempts.js';
import { deleteTask } from './moves/delete-task.js';
import { editTask, type TaskPatch } from './moves/edit-task.js';
import { Transactor, type Clock, type Tx, type WriteHealth } from './moves/tx.js';
import type {
  BoardStore,
  EventTable,
  RunTable,
  HoldTable,
  HostTable,
  ScheduleTable,
  StorageFailure,
  TaskReads,
} from './store/contract.js';
import type { TaskDetail, TaskFilter, TaskMatch } from './store/records/task.js';
/** Between a keyed request's tries while a lock holds it. */
const KEYED_RETRY_MS = 50;

function keyInUse(key: KeyedRequest): AppError {
  return new AppError(
    'IDEMPOTENCY_KEY_IN_USE',
    `a request with Idempotency-Key "${key.key}" is still being handled; try again`,
    { headers: { 'retry-after': '1' } },
  );
}

/** Whether `work` settles within `ms`; its timer is cleared either way. */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const abort = new AbortController();
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      sleep(Math.max(0, ms), false, { signal: abort.signal, ref: false }),
    ]);
  } finally {
    abort.abort();
  }
}

export class Board {
  readonly tasks: TaskReads;
  readonly runs: RunTable;
  readonly events: EventTable;
  readonly hosts: HostTable;
  /** Profiles a rate limit holds (docs/agents.md). */
  readonly holds: HoldTable;
  /** Schedules' shared state (docs/schedules.md). */
  readonly schedules: ScheduleTable;
  /** Other hosts may share the board (see BoardStore.shared). */
  readonly shared: boolean;
  /** Every host's events, in id order (see follow()). */
  readonly bus: EventBus;
  /** This daemon's own commits' events, as they commit: what this host did (its metrics). */
  readonly committed: EventBus;
  private readonly feed: EventFeed;
  private readonly transactor: Transactor;
  private probedAt = -Infinity;

  /** Keyed requests being handled by this process, by their key (see keyed). */
  private readonly handling = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: BoardStore,
    readonly clock: Clock,
    onListenerError: (err: unknown) => void,
    /** How long a keyed request waits for its twin (docs/api.md: 10 s). */
    private readonly keyedWaitMs = 10_000,
  ) {
    this.tasks = store.tasks;
    this.runs = store.runs;
    this.events = store.events;
    this.hosts = store.hosts;
    this.holds = store.holds;
    this.schedules = store.schedules;
    this.shared = store.shared;
    this.bus = new EventBus(onListenerError);
    this.committed = new EventBus(onListenerError);
    this.feed = new EventFeed(this.bus, store.events, onListenerError);
    this.transactor = new Transactor(store, clock, {
      publish: (events) => {
        this.committed.publish(events);
        this.feed.publish(events);
      },
      committing: (underWay) => this.feed.committing(underWay),
    });
  }

  /**
   * From now on the bus carries every host's events in id order, none missing (a shared board;
   * on a board of its own it carries this daemon's commits whether or not this was called).
   */
  follow(): Promise<void> {
    return this.feed.follow(this.store);
  }

  /** Stops following other hosts' events (before the store closes). */
  unfollow(): Promise<void> {
    return this.feed.stop();
  }

  /**
   * Whether the board can be written. After a failed write, a probe (a one-row write, at most
   * once a second) finds out whether it can be again, even when nothing else writes.
   */
  async writable(): Promise<WriteHealth> {
    const health = this.transactor.writeHealth;
    const now = this.clock.wall();
    if (health.ok || now - this.probedAt < 1000) return health;
    this.probedAt = now;
    try {
      await this.transact((tx) => tx.store.probeWrite(tx.now));
      this.transactor.writable();
    } catch {
      // Still failing: the transactor kept why.
    }
    return this.transactor.writeHealth;
  }

  /**
   * Runs moves in the next group commit (see Transactor.run); their events are published after
   * the commit.
   */
  transact<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.transactor.run(fn);
  }

  /**
   * Renews a host's lease. On a shared board it is one statement of its own, never queued
   * behind the board's writes: a write held up by another host's locks (a host frozen in the
   * middle of a transaction) must not cost this host its lease.
   */
  renewHost(id: number, renewal: HostRenewal): Promise<Host | null> {
    if (this.shared) return this.store.hosts.renew(id, renewal);
    return this.transact((tx) => tx.store.hosts.renew(id, renewal));
  }

  /** What a storage error means for the API (see BoardStore.failureOf), or null. */
  storageFailure(err: unknown): StorageFailure | null {
    return this.store.failureOf(err);
  }

  /** Resolves once every move queued so far has committed or been refused. */
  settled(): Promise<void> {
    return this.transactor.idle();
  }

  async get(id: string): Promise<Task> {
    const task = await this.tasks.get(id);
    if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
    return task;
  }

  /** A task with its runs, read together (404 when there is none). */
  async detail(id: string): Promise<TaskDetail> {
    const found = await this.tasks.detail(id);
    if (!found) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
    return found;
  }

  async list(
    filter: Omit<TaskFilter, 'afterSeq' | 'order'> & {
      cursor?: string | undefined;
      order?: 'asc' | 'desc' | undefined;
    },
  ): Promise<{ tasks: Task[]; nextCursor: string | null }> {
    const afterSeq = filter.cursor === undefined ? null : decodeCursor(filter.cursor);
    const page = await this.tasks.list({ ...filter, order: filter.order ?? 'asc', afterSeq });
    return {
      tasks: page.tasks,
      nextCursor: page.more && page.lastSeq !== null ? encodeCursor(page.lastSeq) : null,
    };
  }

  /** Creates a task; tasks created during one turn of the event loop commit together. */
  async create(input: TaskInput, origin: Origin): Promise<Task> {
    return this.transact((tx) => createTask(tx, input, origin));
  }

  /**
   * The first answer to a keyed request, if its key holds one (a read, outside any write): a
   * retry is answered with it before anything else is checked again (docs/workers.md).
   */
  async replayOf<T>(key: KeyedRequest): Promise<Answer<T> | null> {
    return replayOf<T>(
      await this.store.idempotency.find(key.key),
      key,
      this.clock.wall() - key.lifetimeMs,
    );
  }

  /** Creates a task once per Idempotency-Key (see keyed). */
  createKeyed(input: TaskInput, origin: Origin, key: KeyedRequest): Promise<Answer<Task>> {
    return this.keyed(key, 201, (tx) => createTask(tx, input, origin));
  }

  /**
   * Creates a task given to attempts at once (docs/attempts.md), in one transaction: it never
   * runs itself. Once per Idempotency-Key when one is given.
   */
  createWithAttempts(
    input: TaskInput,
    origin: Origin,
    attempts: AttemptsRequest,
    key: KeyedRequest | null,
  ): Promise<Answer<Task>> {
    const make = async (tx: Tx) =>
      (await startAttempts(tx, (await createTask(tx, input, origin)).id, attempts, origin)).task;
    if (key) return this.keyed(key, 201, make);
    return this.transact(make).then((body) => ({ status: 201, body, replayed: false }));
  }

  /** Comments once per Idempotency-Key (see keyed). */
  commentKeyed(
    id: string,
    text: string,
    author: string,
    key: KeyedRequest,
  ): Promise<Answer<Comment>> {
    return this.keyed(key, 201, (tx) => addComment(tx, id, text, author));
  }

  /** A follow-up (docs/workers.md): the task runs again with `text` as its instructions. */
  followUp(id: string, text: string, author: string): Promise<Task> {
    return this.transact((tx) => followUp(tx, id, text, author));
  }

  followUpKeyed(
    id: string,
    text: string,
    author: string,
    key: KeyedRequest,
  ): Promise<Answer<Task>> {
    return this.keyed(key, 200, (tx) => followUp(tx, id, text, author));
  }

  /** A task in review approved (docs/workers.md): done, its children promoted. */
  approve(id: string, by: string): Promise<Task> {
    return this.transact((tx) => approveTask(tx, id, by));
  }

  /** A task's first run approved by a person (docs/mcp.md), at the revision they saw if said. */
  approveRun(id: string, by: string, revision: number | null): Promise<Task> {
    return this.transact((tx) => approveRun(tx, id, by, revision));
  }

  /** The answer to the question a blocked task's agent asked: it runs again with it. */
  answer(id: string, text: string, author: string): Promise<Task> {
    return this.transact((tx) => answerQuestion(tx, id, text, author));
  }

  /** A task in review sent back with what to change: ready, `text` its next run's instructions. */
  requestChanges(id: string, text: string, author: string): Promise<Task> {
    return this.transact((tx) => requestChanges(tx, id, text, author));
  }

  /** A request with this key is being handled by this process now. */
  handlingKey(key: string): boolean {
    return this.handling.has(key);
  }

  /**
   * Makes what a keyed request asks for once (moves/once.ts). A twin still being handled here is
   * waited for (at most keyedWaitMs, then IDEMPOTENCY_KEY_IN_USE) and its answer replayed; one
   * on another host holds the key's row until it commits, and is waited for the same way.
   */
  private async keyed<T>(
    key: KeyedRequest,
    status: number,
    make: (tx: Tx) => Promise<T>,
  ): Promise<Answer<T>> {
    const deadline = performance.now() + this.keyedWaitMs;
    for (let twin = this.handling.get(key.key); twin; twin = this.handling.get(key.key)) {
      if (!(await settledWithin(twin, deadline - performance.now()))) throw keyInUse(key);
    }
    const work = this.keyedOnce(key, status, make, deadline);
    this.handling.set(key.key, work);
    try {
      return await work;
    } finally {
      if (this.handling.get(key.key) === work) this.handling.delete(key.key);
    }
  }

  private async keyedOnce<T>(
    key: KeyedRequest,
    status: number,
    make: (tx: Tx) => Promise<T>,
    deadline: number,
  ): Promise<Answer<T>> {
    for (;;) {
      try {
        return await this.transact((tx) =>
          once(tx, key, async () => ({ status, body: await make(tx) })),
        );
      } catch (err) {
        // Another host's twin committed the key first: its answer is replayed on the next try.
        if (err instanceof AppError && err.code === 'IDEMPOTENCY_KEY_IN_USE') continue;
        // On a shared board a lock held past the session's lock_timeout is that twin's row, not
        // yet committed: waited for, then IN_USE. SQLite's busy file was retried already.
        const busy =
          (err instanceof AppError && err.code === 'STORAGE_BUSY') ||
          this.storageFailure(err)?.kind === 'busy';
        if (!busy || !this.shared) throw err;
        if (performance.now() >= deadline) throw keyInUse(key);
        await sleep(KEYED_RETRY_MS, undefined, { ref: false });
      }
    }
  }

  edit(id: string, patch: TaskPatch): Promise<Task> {
    return this.transact((tx) => editTask(tx, id, patch));
  }

  /** Deletes an archived task; returns the ids of its runs, whose folders go too. */
  delete(id: string): Promise<string[]> {
    return this.transact((tx) => deleteTask(tx, id));
  }

  comment(id: string, text: string, author: string): Promise<Comment> {
    return this.transact((tx) => addComment(tx, id, text, author));
  }

  /**
   * An `after` cursor the board has reached: one beyond the newest event would match nothing
   * now and silently skip the events written until the board catches up.
   */
  async checkAfter(after: number): Promise<void> {
    const newest = await this.events.highWater();
    if (after > newest)
      throw new AppError(
        'VALIDATION_FAILED',
        `after: the board has never reached event ${after} (the newest is ${newest})`,
      );
  }

  /**
   * The worker profiles some host runs, so a task assigned one can run: `own` (this daemon's),
   * and on a shared board those of every active host.
   */
  async profilesServed(own: readonly string[]): Promise<string[]> {
    const served = new Set(own);
    if (this.shared)
      for (const host of await this.hosts.list())
        if (host.state === 'active') for (const p of host.profiles) served.add(p);
    return [...served];
  }

  counts(match: TaskMatch = {}): Promise<Record<TaskStatus, number>> {
    return this.tasks.counts(match);
  }
}

function encodeCursor(seq: number): string {
  return Buffer.from(`seq:${seq}`).toString('base64url');
}

function decodeCursor(cursor: string): number {
  const match = /^seq:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) throw new AppError('VALIDATION_FAILED', 'cursor is not one this server issued');
  return Number(match[1]);
}
