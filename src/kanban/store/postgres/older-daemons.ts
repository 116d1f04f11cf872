// Daemons of the versions before many hosts served one board (one daemon per board) hold an
// exclusive session advisory lock on the schema while they serve, and stand by while it is
// held. A daemon of this version holds the same lock shared for as long as it runs, on a
// connection of its own: it waits while an older daemon serves, and an older daemon stands by
// while any daemon of this version runs. A rolling upgrade never has an older daemon, which
// knows nothing of other hosts, serving beside newer ones.
import pg from 'pg';

const KEY = "hashtext('gatehouse.board'), hashtext($1)";
const RETRY_MS = 2000;

export interface OlderDaemonsOptions {
  url: string;
  schema: string;
  /** An older daemon serves the board: this one waits for it to let go. */
  onWait: (why: string) => void;
  /** The lock's connection failed; it is taken again. */
  onError: (err: unknown) => void;
}

export class OlderDaemonsFence {
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private stopped = false;

  private constructor(private readonly opts: OlderDaemonsOptions) {}

  /** Resolves once no older daemon serves the board (waiting as long as one does). */
  static async take(opts: OlderDaemonsOptions): Promise<OlderDaemonsFence> {
    const fence = new OlderDaemonsFence(opts);
    await fence.hold(true);
    return fence;
  }

  private async hold(first: boolean): Promise<void> {
    this.retry = null;
    const client = new pg.Client({
      connectionString: this.opts.url,
      application_name: 'gatehouse board',
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      // The server, too, finds a peer that vanished (see the pool's options).
      options: '-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=2',
    });
    client.on('error', (err) => this.lost(client, err));
    try {
      await client.connect();
      const { rows } = await client.query<{ held: boolean }>(
        `SELECT pg_try_advisory_lock_shared(${KEY}) AS held`,
        [this.opts.schema],
      );
      if (!rows[0]?.held) {
        this.opts.onWait(
          'waiting: a gatehouse daemon of an older version serves this board alone; stop it (or let it finish) to serve the board from many hosts',
        );
        await client.query(`SELECT pg_advisory_lock_shared(${KEY})`, [this.opts.schema]);
      }
      if (this.stopped) {
        await client.end();
        return;
      }
      this.client = client;
      client.on('end', () => this.lost(client, new Error("the board lock's connection ended")));
    } catch (err) {
      await client.end().catch(() => undefined);
      if (first) throw err;
      this.lost(client, err);
    }
  }

  private lost(client: pg.Client, err: unknown): void {
    if (this.stopped || this.retry || (this.client !== null && this.client !== client)) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.opts.onError(err);
    this.retry = setTimeout(() => void this.hold(false), RETRY_MS);
    this.retry.unref();
  }

  async release(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
