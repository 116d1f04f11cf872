// What the board needs of a store, whichever engine holds it (SQLite embedded, PostgreSQL for
// many hosts). Each table's reads and writes are written out here, with the records they take
// and give in ./records/; each engine implements them in its own folder and neither imports the
// other. Everything outside this folder sees only these types (eslint no-restricted-imports).
import type { AgentUsage } from '../../agents/types.js';
import type { BoardEvent, EventKind, NewEvent } from '../model/events.js';
import type { PrSync } from '../model/pull-request.js';
import type { Comment, Host, Task, TaskStatus } from '../model/types.js';
import type { ProfileHold } from './records/hold.js';
import type { HostRenewal, NewHost } from './records/host.js';
import type { IdempotencyRecord } from './records/idempotency.js';
import type { ScheduleState } from './records/schedule.js';
import type { Delivery, Subscription } from './records/platform.js';
import type { EndedBucket, NewRun, OpenRun, RunEnd, RunRecord } from './records/run.js';
import type {
  PrWork,
  RunningDeadline,
  TaskDetail,
  TaskFilter,
  TaskLease,
  TaskMatch,
  TaskPage,
} from './records/task.js';
import type { TaskWriter, WRITES } from './records/task-writes.js';

export interface TaskReads {
  get(id: string): Promise<Task | null>;
  /** The task, its runs and the tasks that wait on it, read together (one snapshot), or null. */
  detail(id: string): Promise<TaskDetail | null>;
  /** The task's comments written since `since` (the newest `limit`), oldest first. */
  commentsSince(id: string, since: number, limit: number): Promise<Comment[]>;
  list(filter: TaskFilter): Promise<TaskPage>;
  children(id: string): Promise<string[]>;
  /** Tasks whose workspace is due to go: archived, or done before `doneBefore`. */
  workspacesToRetire(doneBefore: number, limit: number): Promise<string[]>;
  /** Tasks per status, of those `match` picks (all by default). */
  counts(match?: TaskMatch): Promise<Record<TaskStatus, number>>;
  /**
   * Ready tasks for `profile` whose cooldown has passed, best first (priority, then oldest);
   * unassigned ones count as the default profile's. `host` is this host's name: on a shared
   * board a task whose workspace is on another live host is that host's to run.
   */
  dispatchable(
    now: number,
    profile: string,
    isDefault: boolean,
    limit: number,
    host: string,
  ): Promise<string[]>;
  /** Ready tasks assigned to a profile that is not configured (any more). */
  stranded(profiles: readonly string[]): Promise<{ id: string; assignee: string }[]>;
  /** The oldest `limit` open tasks (todo, ready, running, review, blocked) and how many there are. */
  open(limit: number): Promise<{ tasks: Task[]; total: number }>;
  /** The termination pending on a running task, or null. */
  terminatingOf(id: string): Promise<string | null>;
  /** What the tick checks of every running task, and nothing else of the row (it runs often). */
  runningDeadlines(): Promise<RunningDeadline[]>;
  running(): Promise<(Task & TaskLease)[]>;
  /** Tasks whose pull request is followed (not archived), oldest first, at most `limit`. */
  pullRequests(limit: number): Promise<PrWork[]>;
  /** The task's pull request's sync state, or null when it is not followed. */
  prSync(id: string): Promise<PrSync | null>;
}

export interface RunTable {
  /** Inserts the run; the run as it was written. */
  create(run: NewRun): Promise<RunRecord>;
  get(id: string): Promise<RunRecord | null>;
  /** The run a worker token belongs to, found by the token's hash. */
  byTokenHash(hash: string): Promise<RunRecord | null>;
  forTask(taskId: string): Promise<RunRecord[]>;
  recordProcess(
    id: string,
    proc: { pid: number; pgid: number; startTime: number; bootId: string },
  ): Promise<void>;
  /** Closes an open run; false if it was already closed. */
  close(id: string, at: number, end: RunEnd): Promise<boolean>;
  /** Which of `ids` the board has runs for. */
  existing(ids: readonly string[]): Promise<Set<string>>;
  /** How a closed run's process ended, learnt after its verdict; a recorded status stays. */
  recordExit(id: string, exit: { exitCode: number | null; signal: string | null }): Promise<void>;
  markGone(id: string, at: number): Promise<void>;
  recordSample(id: string, cpu: number, rss: number): Promise<void>;
  /** Finished runs by outcome. */
  countByOutcome(): Promise<Record<string, number>>;
  /** Whether a closed run of the task may still have processes alive. */
  hasLingering(taskId: string): Promise<boolean>;
  /**
   * Ended runs (nothing of them alive) that ended before `before` and still have their folder;
   * with `hostId`, only that host's (and those of no host): a folder is on its host's disk.
   */
  prunableBefore(before: number, limit: number, hostId: number | null): Promise<string[]>;
  markPruned(id: string, at: number): Promise<void>;
  /** Closed runs whose process group has not been confirmed gone. */
  unreaped(): Promise<RunRecord[]>;
  /** The run is supervised by this host from now on (it adopted the run's worker). */
  assignHost(id: string, hostId: number, host: string): Promise<void>;
  /** The runs a host has not ended, oldest first. */
  openOnHost(hostId: number): Promise<RunRecord[]>;
  /** Every run not ended yet, on any host, oldest first. */
  open(): Promise<OpenRun[]>;
  /** The usage of the profile's runs that ended since `since` (its daily budget, docs/budgets.md). */
  usageSince(profile: string, since: number): Promise<(AgentUsage | null)[]>;
  /** Runs ended since `from`, counted by outcome in buckets of `bucketMs` (each at its start). */
  endedByBucket(from: number, bucketMs: number): Promise<EndedBucket[]>;
}

export interface EventTable {
  /** When the run last recorded an event of `kind`, or null. */
  lastAt(taskId: string, runId: string, kind: EventKind): Promise<number | null>;
  /** Deletes up to `limit` of the oldest events written before `before`; how many. */
  pruneBefore(before: number, limit: number): Promise<number>;
  /** Writes a transaction's events, in order, at its commit; their ids. */
  append(events: readonly NewEvent[], at: number): Promise<number[]>;
  list(afterId: number, limit: number): Promise<BoardEvent[]>;
  listForTask(taskId: string, afterId: number, limit: number): Promise<BoardEvent[]>;
  /** Events of the given kinds after `afterId`, oldest first. */
  listKinds(afterId: number, kinds: readonly EventKind[], limit: number): Promise<BoardEvent[]>;
  lastId(): Promise<number>;
  /** The highest id ever given to an event, even one retention has removed since. */
  highWater(): Promise<number>;
}

export interface PlatformTable {
  state(name: string): Promise<Record<string, unknown> | null>;
  /**
   * Replaces the keys of the platform's state that `patch` names, keeping the others (in one
   * statement on PostgreSQL, so hosts writing different keys at once lose none).
   */
  mergeState(name: string, patch: Record<string, unknown>, at: number): Promise<void>;
  /**
   * Makes `hostId` the platform's holder, or keeps it so: unless another host holds it whose
   * lease has not been out for `graceMs`. Whether `hostId` holds it now.
   */
  hold(platform: string, hostId: number, graceMs: number): Promise<boolean>;
  /** The host that holds the platform, or null (on PostgreSQL the row stays locked, shared). */
  heldBy(platform: string): Promise<number | null>;
  subscribe(platform: string, channel: string, taskId: string, cursor: number): Promise<void>;
  advanceCursor(sub: Subscription, eventId: number): Promise<void>;
  subscriptionsOf(taskId: string): Promise<Subscription[]>;
  /**
   * An inbound delivery seen before, by its id (the signature covers the id, so a repeat is
   * the same id and nothing else): what it created (null: nothing), or undefined if new.
   */
  delivery(platform: string, delivery: Delivery): Promise<{ taskId: string | null } | undefined>;
  /** Remembers a handled delivery; called in the transaction of what it created. */
  recordDelivery(
    platform: string,
    delivery: Delivery,
    taskId: string | null,
    at: number,
  ): Promise<void>;
  /** Forgets deliveries older than `before` (their replay window has passed); how many. */
  forgetDeliveries(before: number): Promise<number>;
  /** Subscriptions with at least one notifiable event past their cursor. */
  withPending(): Promise<Subscription[]>;
}

export interface HostTable {
  register(h: NewHost): Promise<Host>;
  /** Extends the lease of an active host; null when it is dead (or expired, if asked). */
  renew(id: number, r: HostRenewal): Promise<Host | null>;
  /**
   * The host is active and its lease has not run out; on PostgreSQL its row stays locked
   * (shared) until the transaction ends, so it cannot be declared dead meanwhile.
   */
  holdsLease(id: number): Promise<boolean>;
  list(): Promise<Host[]>;
  get(id: number): Promise<Host | null>;
  /** Active hosts whose lease ran out more than `graceMs` ago. */
  expired(graceMs: number): Promise<Host[]>;
  /**
   * Declares a host dead, if its lease still ends at `leaseExpiresAt` (it has not renewed since
   * it was seen expired); null if it renewed or already was dead.
   */
  markDead(id: number, leaseExpiresAt: number): Promise<Host | null>;
}

export interface IdempotencyTable {
  find(key: string): Promise<IdempotencyRecord | null>;
  /** Records the key unless a live one (sent since `expiredBefore`) holds it; whether it did. */
  record(r: IdempotencyRecord, expiredBefore: number): Promise<boolean>;
  /** Removes the keys sent before `before`; how many. */
  sweep(before: number): Promise<number>;
}

export interface HoldTable {
  /** The holds still in force at `now`. */
  active(now: number): Promise<ProfileHold[]>;
  /** Holds the profile until `hold.until` unless a later hold is in force; whether it did. */
  hold(hold: ProfileHold): Promise<boolean>;
  /** Ends the profile's hold early; whether one was in force. */
  release(profile: string, now: number): Promise<boolean>;
}

export interface ScheduleTable {
  /** The state of every schedule that has one (a schedule never fired nor paused has none). */
  states(): Promise<ScheduleState[]>;
  /**
   * Records `fireTime` as the schedule's last firing unless one at or after it is recorded;
   * whether it did. On PostgreSQL a second host's twin waits for the first to commit, then
   * finds the firing taken.
   */
  fire(name: string, fireTime: number, at: number): Promise<boolean>;
  /** The task the schedule's last firing made. */
  madeTask(name: string, taskId: string, at: number): Promise<void>;
  setPaused(name: string, paused: boolean, at: number): Promise<void>;
}

/** The board's tables, read outside any transaction: committed rows only. */
export interface Tables {
  readonly tasks: TaskReads;
  readonly runs: RunTable;
  readonly events: EventTable;
  readonly platforms: PlatformTable;
  readonly hosts: HostTable;
  readonly idempotency: IdempotencyTable;
  readonly holds: HoldTable;
  readonly schedules: ScheduleTable;
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
