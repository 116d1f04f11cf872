// A host's lease renewals on a connection of their own, outside the pool: a pool full of reads
// held up by a lock (an operator's LOCK TABLE, a dashboard's worth of readers) never keeps this
// host from renewing, and no renewal waits longer than a renewal is worth. Opened at the first
// renewal, and again after it fails; closed with the store.
import pg from 'pg';
import type { Queryable } from './query.js';

export interface LeaseConnectionOptions {
  url: string;
  /** The pool's session options (search_path, keep-alives), which this session shares. */
  sessionOptions: string;
  types: pg.CustomTypesConfig;
  /** The most one renewal may take, connecting included (ms). */
  boundMs: number;
}

export class LeaseConnection implements Pick<pg.Pool, 'query'> {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private closed = false;

  constructor(private readonly opts: LeaseConnectionOptions) {}

  /** One statement on the lease's own session; a failure closes the session (opened anew next time). */
  readonly query: Queryable['query'] = (async (config: pg.QueryConfig) => {
    const client = await this.connected();
    try {
      return await client.query(config);
    } catch (err) {
      // A statement that timed out or a socket that failed leaves the session unknown: a new one.
      if (!(err instanceof pg.DatabaseError) || err.code === '57014') this.drop(client);
      throw err;
    }
  }) as Queryable['query'];

  private connected(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('the board store is closed'));
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const bound = Math.max(500, Math.floor(this.opts.boundMs));
    // The server gives up on a statement (or a lock) before the client gives up on the server.
    const client = new pg.Client({
      connectionString: this.opts.url,
      application_name: 'gatehouse lease',
      options: `${this.opts.sessionOptions} -c statement_timeout=${Math.floor(bound * 0.8)} -c lock_timeout=${Math.floor(bound * 0.6)}`,
      keepAlive: true,
      connectionTimeoutMillis: bound,
      query_timeout: bound,
      types: this.opts.types,
    });
    // Without a listener, an idle socket's failure would be an uncaught error.
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    try {
      await client.connect();
    } catch (err) {
      client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error('the board store is closed');
    }
    this.client = client;
    return client;
  }

  private drop(client: pg.Client): void {
    if (this.client === client) this.client = null;
    client.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
