// The board's storage on PostgreSQL: a pool for reads (committed rows only) and, for each
// transaction, a connection of its own from the pool. Tables are reached through the schema's
// search_path; every bigint is read as a JavaScript number (epoch milliseconds, ids).
import type { Writable } from 'node:stream';
import pg from 'pg';
import { AppError } from '../../../errors.js';
import type { BoardStore, StorageFailure, Tables, TxHandle, TxTables } from '../contract.js';
import { WRITES } from '../records/task-writes.js';
import { EventWatch } from './event-watch.js';
import { OlderDaemonsFence, type OlderDaemonsOptions } from './older-daemons.js';
import { PgEventStore } from './event-store.js';
import { PgHostStore } from './host-store.js';
import { PgHoldStore } from './hold-store.js';
import { PgScheduleStore } from './schedule-store.js';
import { PgIdempotencyStore } from './idempotency-store.js';
import { LeaseConnection } from './lease-connection.js';
import { PgPlatformStore } from './platform-store.js';
import { run, type Queryable } from './query.js';
import { PgRunStore } from './run-store.js';
import { migratePostgres, schemaIdent } from './schema.js';
import { PgTaskStore } from './task-store.js';
import { PgTaskWrites } from './task-writes.js';

const INT8 = 20;
/** Every bigint (epoch milliseconds, ids, counts) as a JavaScript number. */
export const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    oid === INT8
      ? Number
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/** Errors of the connection rather than of a statement: the transaction is gone with it. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** A statement refused because an earlier one failed: "current transaction is aborted". */
const ABORTED = '25P02';

function sqlState(err: unknown): string | null {
  return err instanceof pg.DatabaseError && typeof err.code === 'string' ? err.code : null;
}

function connectionLost(err: unknown): boolean {
  // The board's own errors (a refused move) say nothing of the connection, whatever their text.
  if (err instanceof AppError) return false;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  const state = sqlState(err);
  if (state !== null) return state.startsWith('08') || state.startsWith('57P');
  // pg's own errors about its connection carry no code.
  const message = err instanceof Error && err.constructor === Error ? err.message : '';
  return /connection terminated|connection error|not queryable|timeout exceeded when trying to connect|query read timeout/i.test(
    message,
  );
}

/** The tables on `db`; a host's lease is renewed on `leaseDb` (its own session, outside a transaction). */
function tables(db: Queryable, schema: string, leaseDb: Queryable = db): Tables {
  return {
    tasks: new PgTaskStore(db),
    runs: new PgRunStore(db),
    events: new PgEventStore(db, schema),
    platforms: new PgPlatformStore(db),
    hosts: new PgHostStore(db, leaseDb),
    idempotency: new PgIdempotencyStore(db),
    holds: new PgHoldStore(db),
    schedules: new PgScheduleStore(db),
  };
}

function txTables(tx: PgTransaction, schema: string): TxTables {
  const db = tx.db;
  return {
    ...tables(db, schema),
    [WRITES]: new PgTaskWrites(db, tx.answerLater),
    probeWrite: async (at: number) => {
      await run(
        db,
        `INSERT INTO write_probe (id, at) VALUES (1, $1)
          ON CONFLICT (id) DO UPDATE SET at = excluded.at`,
        [at],
      );
    },
  };
}

/**
 * One open transaction on its own connection: its savepoints, the statements sent without
 * waiting for their answer (see pipe), the COMMIT sent behind its last statement, and whether
 * its connection was lost meanwhile.
 */
class PgTransaction implements TxHandle {
  lost = false;
  private savepoints = 0;
  private piped: Promise<unknown>[] = [];

  /**
   * The connection as the transaction's statements use it: what is sent in one turn of the
   * event loop (the statements a move asks together, a piped BEGIN with the first) goes out
   * in one write, not one write each.
   */
  readonly db: Queryable;
  private corked = false;
  /** The COMMIT sent behind the last statement (commitAfterNext), or null: sent after. */
  commit: Promise<pg.QueryResult> | null = null;
  private commitNext = false;

  constructor(readonly client: pg.PoolClient) {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    this.db = {
      query: ((...args: unknown[]) => {
        this.cork();
        const answer = query(...args);
        // Sent (a statement that cannot be sent throws here): the commit asked for goes behind.
        if (this.commitNext) {
          this.commitNext = false;
          this.commit = query('COMMIT') as Promise<pg.QueryResult>;
          this.commit.catch(() => undefined);
        }
        return answer;
      }) as pg.PoolClient['query'],
    };
  }

  /** Holds this turn's writes back until its end (pg's own per-statement cork nests in it). */
  private cork(): void {
    if (this.corked) return;
    const stream = (this.client as unknown as { connection?: { stream?: Writable } }).connection
      ?.stream;
    if (!stream?.cork) return;
    this.corked = true;
    stream.cork();
    process.nextTick(() => {
      this.corked = false;
      stream.uncork();
    });
  }

  /**
   * Sends `text` on the pipelined connection without waiting for its answer, so it travels with
   * the statement after it: BEGIN, SAVEPOINT and RELEASE cost no round trip of their own. A
   * failure of one aborts the transaction: the statements after it fail, and the commit waits
   * for every piped answer first.
   */
  pipe(text: string): void {
    this.answerLater(this.db.query(text));
  }

  /**
   * A statement already sent whose answer nothing waits for: the commit waits for it, and its
   * failure (which aborts the transaction) is the transaction's.
   */
  readonly answerLater = (answer: Promise<unknown>): void => {
    answer.catch(() => undefined);
    this.piped.push(answer);
  };

  /**
   * Why the transaction failed, `thrown` being what its caller saw: the first statement sent
   * since piped place `from` that failed of its own (in the order sent, not the order their
   * failures reach this process), else `thrown`. The statements after a failure fail only
   * because of it ("current transaction is aborted", 25P02), and are never the cause.
   */
  async rootCause(thrown: unknown, from = 0): Promise<unknown> {
    const answers = await Promise.allSettled(this.piped.slice(from));
    for (const answer of answers)
      if (answer.status === 'rejected' && sqlState(answer.reason) !== ABORTED) return answer.reason;
    return thrown;
  }

  commitAfterNext(): void {
    if (!this.commit && !this.lost) this.commitNext = true;
  }

  /** Every piped statement's answer; one that failed is thrown (rootCause: which was first). */
  async answered(): Promise<void> {
    await Promise.all(this.piped);
  }

  async savepoint<T>(fn: () => Promise<T>): Promise<T> {
    const name = `move${++this.savepoints}`;
    this.pipe(`SAVEPOINT ${name}`);
    const mark = this.piped.length;
    try {
      const value = await fn();
      this.pipe(`RELEASE SAVEPOINT ${name}`);
      return value;
    } catch (thrown) {
      const err = await this.rootCause(thrown, mark);
      if (connectionLost(err)) this.lost = true;
      // A savepoint that cannot be rolled back to leaves nothing of the transaction usable.
      if (this.open)
        await this.client.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => (this.lost = true));
      // Undone with it: what this move sent is not the transaction's to wait for any more.
      if (this.open) this.piped.length = mark;
      throw err;
    }
  }

  get open(): boolean {
    return !this.lost;
  }
}

export class PgStore implements BoardStore {
  readonly tasks;
  readonly runs;
  readonly events;
  readonly platforms;
  readonly hosts;
  readonly idempotency;
  readonly holds;
  readonly schedules;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    private readonly url: string,
    private readonly fence: OlderDaemonsFence | null,
    private readonly lease: LeaseConnection,
  ) {
    ({
      tasks: this.tasks,
      runs: this.runs,
      events: this.events,
      platforms: this.platforms,
      hosts: this.hosts,
      idempotency: this.idempotency,
      holds: this.holds,
      schedules: this.schedules,
    } = tables(pool, schema, lease));
  }

  watch(
    onChange: (upTo: number | null) => void,
    onError: (err: unknown) => void,
  ): () => Promise<void> {
    const watch = new EventWatch({ url: this.url, schema: this.schema, onChange, onError });
    return () => watch.stop();
  }

  /**
   * Nothing to change: a row lock another host holds is waited for (a claim passes a row being
   * claimed), and never for long (see the pool's options).
   */
  serving(): void {}

  /** The caller (the transactor) runs one at a time. */
  async transaction<T>(fn: (tx: TxTables, handle: TxHandle) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const tx = new PgTransaction(client);
    // The pool stops listening to a connection it lent: a socket that fails meanwhile would
    // otherwise be an uncaught error. The transaction is gone with it.
    const onError = () => (tx.lost = true);
    client.on('error', onError);
    try {
      tx.pipe('BEGIN');
      const value = await fn(txTables(tx, this.schema), tx);
      await tx.answered();
      // A transaction PostgreSQL had already aborted answers COMMIT with ROLLBACK, not an error.
      const committed = await (tx.commit ?? client.query('COMMIT'));
      if (committed.command !== 'COMMIT')
        throw new Error(`the transaction was rolled back (${committed.command})`);
      return value;
    } catch (thrown) {
      const err = await tx.rootCause(thrown);
      if (connectionLost(err)) tx.lost = true;
      else if (!tx.lost) await client.query('ROLLBACK').catch(() => (tx.lost = true));
      throw err;
    } finally {
      client.off('error', onError);
      // A connection that failed is closed, not handed to the next transaction.
      client.release(tx.lost);
    }
  }

  get open(): boolean {
    return !this.closed;
  }

  readonly shared = true;

  failureOf(err: unknown): StorageFailure | null {
    const state = sqlState(err);
    // A lock or statement that took longer than the session allows (see SESSION_LIMITS).
    if (state === '40001' || state === '40P01' || state === '55P03' || state === '57014')
      return { kind: 'busy', message: `the board database asked for a retry (${state})` };
    if (connectionLost(err) || (state !== null && /^(53|58|XX)/.test(state))) {
      const why = state ?? (err as { code?: string }).code ?? (err as Error).message;
      return { kind: 'unavailable', message: `the board database cannot be reached (${why})` };
    }
    return null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.lease.close();
    await this.pool.end();
    await this.fence?.release();
  }
}

export interface PostgresOptions {
  url: string;
  schema: string;
  poolSize: number;
  /** The daemon's: keep daemons of older versions from serving beside it (older-daemons.ts). */
  olderDaemons?: Omit<OlderDaemonsOptions, 'url' | 'schema'>;
  /** Told of an idle connection's failure (the pool replaces it). */
  onIdleError?: (err: Error) => void;
}

/** Connects, creates or migrates the schema, and returns the store. */
/**
 * A read or write of the pool waits at most this long for a lock (an operator's LOCK TABLE,
 * another host's transaction) and runs at most this long: the API answers 503 within seconds
 * instead of holding a connection, and the pool is never full of waiters.
 */
const SESSION_LIMITS = '-c lock_timeout=2000 -c statement_timeout=5000';
/** The most one lease renewal may take, connecting included (lease-connection.ts). */
const RENEWAL_BOUND_MS = 3000;

export async function openPostgresStore(opts: PostgresOptions): Promise<PgStore> {
  const ident = schemaIdent(opts.schema);
  // A session of a host that froze or was cut off in the middle of a transaction would hold
  // its row locks (a task, its host row, the event counter) until the server noticed, which
  // TCP alone takes hours to: every other host's writes would wait. The server ends such a
  // session after 5 s idle in its transaction (ours are a few ms), and asks an idle peer
  // every 5 s.
  const session = `-c search_path=${ident} -c idle_in_transaction_session_timeout=5000 -c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=2`;
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.poolSize,
    options: `${session} ${SESSION_LIMITS}`,
    // Seen in pg_stat_activity as what it is.
    application_name: 'gatehouse',
    // Waiting for a free connection counts too: the answer is a 503, not a hung request.
    connectionTimeoutMillis: 5_000,
    // A statement is sent without waiting for the answer to the one before (see PgStore.pipe);
    // pg 8.23 has the option, its type definitions not yet.
    ...{ pipeline: true },
    // A peer that vanished without a word (a host cut off) is found by TCP keep-alive, and no
    // statement waits longer than this for it.
    keepAlive: true,
    query_timeout: 8_000,
    types: pgTypes,
  });
  // An idle connection that breaks (a database restart) must not take the daemon down.
  pool.on('error', (err) => opts.onIdleError?.(err));
  // The pool stops listening to a new session the moment it lends it, before the borrower can:
  // a server that ends the session in the very packet that said it was ready (a
  // pg_terminate_backend, a restart) would be an uncaught error and take the daemon down. The
  // session is unusable after it, which the borrower learns from its first statement.
  pool.on('connect', (client) => client.on('error', () => undefined));
  try {
    const client = await pool.connect();
    let usable = false;
    try {
      // An upgrade may wait for another host's and take its time: no session limits for it.
      await client.query('SET lock_timeout = 0; SET statement_timeout = 0');
      await migratePostgres(client, opts.schema);
      usable = true;
    } finally {
      // Not handed on with the upgrade's settings.
      client.release(usable);
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  let fence: OlderDaemonsFence | null = null;
  if (opts.olderDaemons) {
    try {
      fence = await OlderDaemonsFence.take({
        ...opts.olderDaemons,
        url: opts.url,
        schema: opts.schema,
      });
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
  }
  const lease = new LeaseConnection({
    url: opts.url,
    sessionOptions: session,
    types: pgTypes,
    boundMs: RENEWAL_BOUND_MS,
  });
  return new PgStore(pool, opts.schema, opts.url, fence, lease);
}
