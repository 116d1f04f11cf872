// A transaction on the board's PostgreSQL: one connection of its own from the pool, its
// savepoints, statements piped without waiting for their answers, and whether its connection
// was lost meanwhile (which errors say so).
import type { Writable } from 'node:stream';
import pg from 'pg';
import { AppError } from '../../../errors.js';
import type { TxHandle } from '../contract.js';
import type { Queryable } from './query.js';

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

export function sqlState(err: unknown): string | null {
  return err instanceof pg.DatabaseError && typeof err.code === 'string' ? err.code : null;
}

export function connectionLost(err: unknown): boolean {
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

/**
 * One open transaction on its own connection: its savepoints, the statements sent without
 * waiting for their answer (see pipe), the COMMIT sent behind its last statement, and whether
 * its connection was lost meanwhile.
 */
export class PgTransaction implements TxHandle {
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
