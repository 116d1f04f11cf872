// Opening the board on PostgreSQL: the pool and its sessions' limits, the schema created or
// migrated, the fence against older daemons, the lease's own connection. Tables are reached
// through the schema's search_path; every bigint is read as a JavaScript number.
import pg from 'pg';
import { LeaseConnection } from './lease-connection.js';
import { OlderDaemonsFence, type OlderDaemonsOptions } from './older-daemons.js';
import { migratePostgres, schemaIdent } from './schema.js';
import { PgStore } from './store.js';

const INT8 = 20;
/** Every bigint (epoch milliseconds, ids, counts) as a JavaScript number. */
export const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    oid === INT8
      ? Number
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export interface PostgresOptions {
  url: string;
  schema: string;
  poolSize: number;
  /** The daemon's: keep daemons of older versions from serving beside it (older-daemons.ts). */
  olderDaemons?: Omit<OlderDaemonsOptions, 'url' | 'schema'>;
  /** Told of an idle connection's failure (the pool replaces it). */
  onIdleError?: (err: Error) => void;
}

/**
 * A read or write of the pool waits at most this long for a lock (an operator's LOCK TABLE,
 * another host's transaction) and runs at most this long: the API answers 503 within seconds
 * instead of holding a connection, and the pool is never full of waiters.
 */
const SESSION_LIMITS = '-c lock_timeout=2000 -c statement_timeout=5000';
/** The most one lease renewal may take, connecting included (lease-connection.ts). */
const RENEWAL_BOUND_MS = 3000;

/** Connects, creates or migrates the schema, and returns the store. */
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
