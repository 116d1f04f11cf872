// The websocket event stream: backlog from the DB, then live, with no gap, no duplicate and a bounded buffer.
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { Board } from '../kanban/board.js';
import type { BoardEvent } from '../kanban/model/events.js';
import { FairLane } from './fair-lane.js';

export interface StreamFilter {
  after: number;
  task: string | null;
  kinds: ReadonlySet<string> | null;
}

export interface StreamOptions {
  /** A client whose unsent data passes this is too slow and is closed with 1013 (default 4 MiB). */
  maxBufferedBytes?: number;
  /** Live events queued while the backlog is sent, at most (default 50,000). */
  maxPending?: number;
  /** Backlog rows read per page (default 50). */
  pageSize?: number;
  /** How long a backlog page may take to drain before the client is called too slow (default 30 s). */
  drainTimeoutMs?: number;
  /** A closing client whose buffer does not shrink for this long is cut off (default 30 s). */
  closeStallMs?: number;
}

const CLOSE_POLL_MS = 250;

/** Close codes: 1012 the server is restarting; 1013 the client reads too slowly. */
export const CLOSE_RESTARTING = 1012;
export const CLOSE_TOO_SLOW = 1013;
/** 1011: the backlog could not be read (the database failed); reconnect with the same after. */
export const CLOSE_BACKLOG_FAILED = 1011;

interface Client {
  ws: WebSocket;
  filter: StreamFilter;
  cursor: number;
  /** Live events that arrived while the backlog was being sent; null once live. */
  pending: BoardEvent[] | null;
  unsubscribe: () => void;
}

export class EventStreamHub {
  private readonly clients = new Set<Client>();
  private readonly opts: Required<StreamOptions>;
  /** Backlog pages of every client, a few ms of them per turn of the event loop. */
  private readonly lane = new FairLane();
  /** The largest send buffer any client reached (for tests and metrics). */
  maxBufferedSeen = 0;

  constructor(
    private readonly board: Board,
    opts: StreamOptions = {},
  ) {
    this.opts = {
      maxBufferedBytes: 4 * 1024 * 1024,
      maxPending: 50_000,
      pageSize: 50,
      drainTimeoutMs: 30_000,
      closeStallMs: 30_000,
      ...opts,
    };
  }

  get size(): number {
    return this.clients.size;
  }

  attach(ws: WebSocket, filter: StreamFilter): void {
    const client: Client = {
      ws,
      filter,
      cursor: filter.after,
      pending: [],
      unsubscribe: () => undefined,
    };
    // Subscribe before reading the backlog: whatever commits meanwhile lands in `pending`.
    client.unsubscribe = this.board.bus.subscribe((event) => this.onLive(client, event));
    this.clients.add(client);
    ws.on('close', () => this.drop(client));
    ws.on('error', () => this.drop(client));
    // A backlog that cannot be read (a closed or failing database) ends this stream, not the
    // daemon: the client reconnects with the same after.
    this.backfill(client).catch(() =>
      this.close(client, CLOSE_BACKLOG_FAILED, 'the backlog could not be read'),
    );
  }

  closeAll(code: number, reason: string): void {
    for (const client of [...this.clients]) this.close(client, code, reason);
  }

  /**
   * Sends the backlog a page at a time, each page a step of the fair lane: 200 dashboards
   * resuming at once after a restart share the loop with every other request.
   */
  private async backfill(client: Client): Promise<void> {
    for (;;) {
      const more = await this.lane.run(() => this.sendPage(client));
      if (!more || !(await this.drained(client))) return;
    }
  }

  /**
   * Sends the next backlog page; after the last one, goes live. Whether a page may follow.
   * Whatever commits after the page is read was published after it, so it is in `pending`;
   * what is in both is sent once (deliver skips what is not past the cursor).
   */
  private async sendPage(client: Client): Promise<boolean> {
    if (!this.clients.has(client)) return false;
    const page = await this.board.events.list(client.cursor, this.opts.pageSize);
    if (!this.clients.has(client)) return false;
    // One write for the page rather than a system call per event.
    const socket = (client.ws as unknown as { _socket?: Socket })._socket;
    socket?.cork();
    try {
      for (const event of page) this.deliver(client, event);
      if (page.length === this.opts.pageSize) return true;
      const pending = client.pending ?? [];
      client.pending = null;
      for (const event of pending) this.deliver(client, event);
      return false;
    } finally {
      socket?.uncork();
    }
  }

  private onLive(client: Client, event: BoardEvent): void {
    if (client.pending) {
      client.pending.push(event);
      if (client.pending.length > this.opts.maxPending)
        this.close(client, CLOSE_TOO_SLOW, 'too slow: backlog not read');
      return;
    }
    this.deliver(client, event);
  }

  /** Sends `event` if it is past the client's cursor and matches its filter. */
  private deliver(client: Client, event: BoardEvent): void {
    if (event.id <= client.cursor || !this.clients.has(client)) return;
    client.cursor = event.id;
    const { task, kinds } = client.filter;
    if ((task !== null && event.taskId !== task) || (kinds !== null && !kinds.has(event.kind)))
      return;
    const buffered = client.ws.bufferedAmount;
    this.maxBufferedSeen = Math.max(this.maxBufferedSeen, buffered);
    if (buffered > this.opts.maxBufferedBytes) {
      this.close(
        client,
        CLOSE_TOO_SLOW,
        `too slow: over ${this.opts.maxBufferedBytes} bytes unsent`,
      );
      return;
    }
    client.ws.send(JSON.stringify(event));
  }

  /** Waits until the client's buffer is mostly sent; false (and closed) if it does not drain in time. */
  private async drained(client: Client): Promise<boolean> {
    const deadline = performance.now() + this.opts.drainTimeoutMs;
    while (this.clients.has(client) && client.ws.bufferedAmount > this.opts.maxBufferedBytes / 4) {
      if (performance.now() > deadline) {
        this.close(client, CLOSE_TOO_SLOW, 'too slow: backlog not read');
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.clients.has(client);
  }

  private close(client: Client, code: number, reason: string): void {
    this.drop(client);
    client.ws.close(code, reason);
    // The close frame waits behind what is still unsent: a client that keeps reading gets it
    // (and the code, 1013); one that stopped reading is cut off once nothing drains for a while.
    let last = client.ws.bufferedAmount;
    let still = 0;
    const watch = setInterval(() => {
      const now = client.ws.bufferedAmount;
      still = now < last ? 0 : still + 1;
      last = now;
      if (client.ws.readyState === client.ws.CLOSED) clearInterval(watch);
      else if (still * CLOSE_POLL_MS >= this.opts.closeStallMs) {
        clearInterval(watch);
        client.ws.terminate();
      }
    }, CLOSE_POLL_MS);
    watch.unref();
  }

  private drop(client: Client): void {
    if (!this.clients.delete(client)) return;
    client.unsubscribe();
    client.pending = null;
  }
}
