// Hearing of other hosts' commits: a connection of its own, outside the pool, LISTENs on the
// schema's channel. It is checked every few seconds and opened again when it fails or ends (a
// database restart, a killed backend, a cut network); each new LISTEN is followed by a wake-up,
// since notifications sent while nobody listened are gone. The caller's scan covers the gap.
import pg from 'pg';
import { eventChannel } from './schema.js';

export interface EventWatchOptions {
  url: string;
  schema: string;
  /** A commit's notification (with its newest event id), or a wake-up (null). */
  onChange: (upTo: number | null) => void;
  onError: (err: unknown) => void;
  /** How often the connection is checked (ms). */
  checkMs?: number;
  /** How long to wait before opening a failed connection again (ms). */
  retryMs?: number;
}

export class EventWatch {
  private client: pg.Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  private readonly checker: NodeJS.Timeout;

  constructor(private readonly opts: EventWatchOptions) {
    this.checker = setInterval(() => void this.check(), opts.checkMs ?? 5000);
    this.checker.unref();
    void this.open();
  }

  private async open(): Promise<void> {
    this.retry = null;
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.opts.url,
      application_name: 'gatehouse listen',
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      query_timeout: 10_000,
    });
    this.client = client;
    client.on('notification', (msg) => this.opts.onChange(eventIdOf(msg.payload)));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the listening connection ended')));
    try {
      await client.connect();
      const channel = eventChannel(this.opts.schema).replaceAll('"', '""');
      await client.query(`LISTEN "${channel}"`);
      this.opts.onChange(null);
    } catch (err) {
      this.lost(client, err);
    }
  }

  /** A connection that answers nothing (a peer gone without a word) is found here. */
  private async check(): Promise<void> {
    const client = this.client;
    if (!client || this.retry) return;
    try {
      await client.query('SELECT 1');
    } catch (err) {
      this.lost(client, err);
    }
  }

  private lost(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.opts.onError(err);
    this.retry = setTimeout(() => void this.open(), this.opts.retryMs ?? 1000);
    this.retry.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.checker);
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}

/** The newest event id a commit's notification carries (events.ts sends it), or null. */
function eventIdOf(payload: string | undefined): number | null {
  const id = Number(payload);
  return payload && Number.isSafeInteger(id) ? id : null;
}
