// The board's storage on PostgreSQL: a pool for reads (committed rows only) and, for each
// transaction, a connection of its own from the pool (transaction.ts). Opened by open.ts.
import pg from 'pg';
import type { BoardStore, StorageFailure, TxHandle, TxTables } from '../contract.js';
import { EventWatch } from './event-watch.js';
import type { LeaseConnection } from './lease-connection.js';
import type { OlderDaemonsFence } from './older-daemons.js';
import { tables, txTables } from './tables.js';
import { connectionLost, PgTransaction, sqlState } from './transaction.js';

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
