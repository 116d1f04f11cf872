// One daemon serves a board on PostgreSQL at a time, until many hosts can serve it together
// (their events streamed to each other, one poller per platform): any other daemon stands by. The
// serving daemon holds a session advisory lock on a connection of its own; PostgreSQL frees it
// when that session ends (the daemon stopped, was killed, its machine vanished, the server
// restarted), and a daemon standing by takes it.
import { hostname } from 'node:os';
import pg from 'pg';

/** Another daemon serves this board. */
export class BoardInUseError extends Error {
  constructor(
    readonly schema: string,
    readonly holder: string,
  ) {
    super(`schema ${schema} is served by another gatehouse daemon (${holder})`);
    this.name = 'BoardInUseError';
  }
}

const KEY = "hashtext('gatehouse.board'), hashtext($1)";
/** How often the lock's connection is checked, and how soon a lost one is tried again. */
const CHECK_MS = 2000;

/** Who holds the board's lock, as its connection introduced itself. */
async function holderOf(client: pg.Client, schema: string): Promise<string> {
  const { rows } = await client.query<{ who: string | null; addr: string | null }>(
    `SELECT a.application_name AS who, host(a.client_addr) AS addr
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
        AND l.classid = hashtext('gatehouse.board')::oid AND l.objid = hashtext($1)::oid`,
    [schema],
  );
  const row = rows[0];
  if (!row) return 'it let go meanwhile';
  return `${row.who ?? 'unknown'}${row.addr ? ` from ${row.addr}` : ''}`;
}

export interface BoardLockOptions {
  url: string;
  schema: string;
  /** Another daemon serves the board: this one stands by until it lets go (told once per holder). */
  onStandby: (holder: string) => void;
  /** The lock was lost and another daemon holds it now: this one must stop. */
  onTaken: (err: BoardInUseError) => void;
  /** The lock's connection failed (it is tried again). */
  onError: (err: Error) => void;
}

export class BoardLock {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private checking = false;
  /** The lock's connection is failing: told once, not at every check. */
  private failing = false;

  private constructor(private readonly opts: BoardLockOptions) {}

  /**
   * Takes the board's lock, standing by while another daemon holds it: tried every 200 ms for
   * the first seconds (a daemon being replaced lets go as it exits), then every second.
   */
  static async take(opts: BoardLockOptions): Promise<BoardLock> {
    const lock = new BoardLock(opts);
    const started = Date.now();
    let told: string | null = null;
    for (;;) {
      const holder = await lock.tryTake();
      if (holder === null) break;
      if (holder !== told) opts.onStandby(holder);
      told = holder;
      const pause = Date.now() - started < 5000 ? 200 : 1000;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    lock.timer = setInterval(() => void lock.check(), CHECK_MS);
    lock.timer.unref();
    return lock;
  }

  /** Connects if need be and tries the lock: null once held, else who holds it. */
  private async tryTake(): Promise<string | null> {
    const client = new pg.Client({
      connectionString: this.opts.url,
      application_name: `gatehouse on ${hostname()} pid ${process.pid}`.slice(0, 63),
      keepAlive: true,
      // The server's side too: a daemon whose host vanished (no FIN, no RST) lets go of the board
      // within 5 + 2 × 2 = 9 s, less than a replacing daemon waits by default (replace.timeoutSeconds).
      options: '-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=2',
      connectionTimeoutMillis: 10_000,
      query_timeout: 10_000,
    });
    client.on('error', (err) => this.lost(client, err));
    try {
      await client.connect();
      const { rows } = await client.query<{ held: boolean }>(
        `SELECT pg_try_advisory_lock(${KEY}) AS held`,
        [this.opts.schema],
      );
      if (rows[0]?.held) {
        this.client = client;
        this.failing = false;
        return null;
      }
      const holder = await holderOf(client, this.opts.schema);
      await client.end();
      return holder;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  }

  /** Checks the lock's connection; a lost one is reconnected and the lock taken again. */
  private async check(): Promise<void> {
    if (this.checking || this.closed) return;
    this.checking = true;
    try {
      if (this.client) {
        await this.client.query('SELECT 1');
        return;
      }
      const holder = await this.tryTake();
      if (holder !== null) {
        this.stop();
        this.opts.onTaken(new BoardInUseError(this.opts.schema, holder));
      }
    } catch (err) {
      if (this.client) this.lost(this.client, err as Error);
      else this.failed(err as Error);
    } finally {
      this.checking = false;
    }
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.client !== client) return;
    this.client = null;
    this.failed(err);
    void client.end().catch(() => undefined);
  }

  private failed(err: Error): void {
    if (this.failing) return;
    this.failing = true;
    this.opts.onError(err);
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Lets go of the board (the session ends). */
  async release(): Promise<void> {
    this.closed = true;
    this.stop();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
