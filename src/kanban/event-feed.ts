// What the bus publishes, in the order of event ids with none missing: on a board of its own a
// commit's events go out as it commits; on a board other hosts write too (PostgreSQL), this
// daemon's commits and every other host's are read back from the event log in id order, woken
// by the store's notifications and by a scan every second should those stop.
import type { EventBus } from './event-bus.js';
import type { BoardEvent } from './model/events.js';
import type { BoardStore, EventTable } from './store/contract.js';

/** Events read from the log per query while catching up. */
const PAGE = 500;
/** The backstop: the log is read this often even when no notification comes. */
const SCAN_MS = 1000;

export class EventFeed {
  /** The newest id published, or null before follow(): then commits publish as they come. */
  private published: number | null = null;
  /** Events committed here and not yet published because an earlier id is still unread. */
  private readonly held = new Map<number, BoardEvent>();
  /** The newest id published as it committed, before follow(). */
  private lastDirect = 0;
  /** The read under way, if any. */
  private reading: Promise<void> | null = null;
  private readAgain = false;
  /** When a failure to read was last told (a database outage fails every read for a while). */
  private toldAt = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private unwatch: (() => Promise<void>) | null = null;
  /** This daemon's commit is on its way; the newest id notified meanwhile. */
  private localCommit = false;
  private notifiedUpTo = 0;

  constructor(
    private readonly bus: EventBus,
    private readonly events: EventTable,
    private readonly onError: (err: unknown) => void,
  ) {}

  /**
   * From now on, publishes what every host commits (a shared store only; on a board of its own
   * nothing changes). What was committed before is in the log for whoever reads it.
   */
  async follow(store: BoardStore): Promise<void> {
    if (!store.shared || this.published !== null) return;
    const high = await this.events.highWater();
    // A commit published as it came while the high water was read is not read again.
    this.published = Math.max(high, this.lastDirect);
    this.unwatch = store.watch(
      // A commit of this daemon's own, published as it committed, is not read back; one
      // notified while this daemon's commit is under way may be that commit (its notification
      // can come before its answer), so whether to read is decided once it is published.
      (upTo) => {
        if (upTo !== null && upTo <= (this.published ?? 0)) return;
        if (upTo !== null && this.localCommit)
          this.notifiedUpTo = Math.max(this.notifiedUpTo, upTo);
        else this.read();
      },
      (err) => this.failed(err),
    );
    this.timer = setInterval(() => this.read(), SCAN_MS);
    this.timer.unref();
  }

  /** Stops reading (before the store closes); what commits after goes out as it commits. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.published = null;
    this.notifiedUpTo = 0;
    this.held.clear();
    await this.unwatch?.();
    this.unwatch = null;
    await this.reading;
  }

  /** This daemon's commit is on its way (true), or its group is over, published or not. */
  committing(underWay: boolean): void {
    this.localCommit = underWay;
    if (underWay) return;
    const notified = this.notifiedUpTo;
    this.notifiedUpTo = 0;
    if (this.published !== null && notified > this.published) this.read();
  }

  /** This daemon's commit: published now if nothing before it is missing, else once read. */
  publish(events: readonly BoardEvent[]): void {
    if (this.published === null) {
      this.bus.publish(events);
      for (const event of events) this.lastDirect = Math.max(this.lastDirect, event.id);
      return;
    }
    for (const event of events) if (event.id > this.published) this.held.set(event.id, event);
    this.drain();
    if (this.held.size > 0) this.read();
  }

  private drain(): void {
    for (let next = this.held.get(this.published! + 1); next;) {
      this.held.delete(next.id);
      this.published = next.id;
      this.bus.publish([next]);
      next = this.held.get(next.id + 1);
    }
  }

  /** Reads the log past what was published, once at a time; a call meanwhile reads again after. */
  private read(): void {
    if (this.published === null) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = this.catchUp()
      .catch((err: unknown) => this.failed(err))
      .finally(() => {
        this.reading = null;
        if (this.readAgain) {
          this.readAgain = false;
          this.read();
        }
      });
  }

  /** Told once a minute at most; the next read (a second later at most) tries again. */
  private failed(err: unknown): void {
    if (performance.now() - this.toldAt < 60_000) return;
    this.toldAt = performance.now();
    this.onError(err);
  }

  private async catchUp(): Promise<void> {
    for (;;) {
      const page = await this.events.list(this.published!, PAGE);
      if (this.published === null) return;
      // Ids are taken in commit order, so a hole can only be events pruned before they were
      // read (a daemon far behind): nothing will ever fill it.
      const first = page[0];
      if (first && first.id > this.published + 1) {
        this.published = first.id - 1;
        for (const id of this.held.keys()) if (id <= this.published) this.held.delete(id);
      }
      for (const event of page) if (event.id > this.published) this.held.set(event.id, event);
      this.drain();
      if (page.length < PAGE) return;
    }
  }
}
