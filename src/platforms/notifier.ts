// Notifications: terminal task events go to subscribed chats and home channels; a cursor advances
// only after a successful send, so an outage delays notifications but loses none.
import type { Board } from '../kanban/board.js';
import { EVENT_KINDS, NOTIFY_KINDS, type BoardEvent } from '../kanban/model/events.js';
import { recordDroppedNotification } from '../kanban/moves/records.js';
import { PlatformError, type MessageTag } from './adapter.js';
import type { PlatformStore } from '../kanban/store/platform-store.js';

/** The platform's reason when it refused this one message for good, else null (retry later). */
function refusalOf(err: unknown): string | null {
  const cause = err instanceof Error ? err.cause : undefined;
  return cause instanceof PlatformError && cause.kind === 'caller' ? cause.message : null;
}

export type Sender = (
  platform: string,
  channel: string,
  text: string,
  tag: MessageTag,
) => Promise<void>;

export function notificationText(title: string, event: BoardEvent): string {
  const payload = event.payload as { summary?: unknown; reason?: unknown };
  const extra = payload.summary ?? payload.reason ?? null;
  return `Task ${event.taskId} "${title}" ${EVENT_KINDS[event.kind].notice ?? event.kind}${typeof extra === 'string' && extra ? `: ${extra}` : ''}`;
}

/** One ordered stream of notifications with its own durable cursor. */
interface Stream {
  key: string;
  platform: string;
  channel: string;
  cursor(): number;
  /** The next notifiable event after `after`, or null. */
  next(after: number): BoardEvent | null;
  /** Whether this stream tells about `event` at all (a home channel skips its own platform's tasks). */
  wants(event: BoardEvent): boolean;
  advance(eventId: number): void;
}

export class Notifier {
  private readonly busy = new Set<string>();
  /** Events sent whose cursor could not be written (disk full): not sent again by this process. */
  private readonly sentUnrecorded = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly kinds = new Set(NOTIFY_KINDS);

  constructor(
    private readonly board: Board,
    private readonly store: PlatformStore,
    private readonly send: Sender,
    /** Platforms with a home channel: told about every task created elsewhere. */
    private readonly homes: readonly { platform: string; channel: string }[],
    private readonly retryMs: number,
  ) {}

  start(): void {
    // A home channel starts from now: a new platform is not sent the whole history.
    for (const home of this.homes) {
      if (this.store.homeCursor(home.platform) === null) {
        this.store.setHomeCursor(home.platform, this.board.events.lastId(), this.board.clock());
      }
    }
    this.unsubscribe = this.board.bus.subscribe((event) => this.onEvent(event));
    this.timer = setInterval(() => this.retryPending(), this.retryMs);
    this.timer.unref();
    this.retryPending();
  }

  stop(): void {
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
  }

  /** Streams with notifications waiting (for metrics). */
  backlog(): number {
    return this.pendingStreams().length;
  }

  private onEvent(event: BoardEvent): void {
    if (event.taskId === null || !this.kinds.has(event.kind)) return;
    for (const stream of this.pendingStreams(event.taskId)) void this.deliver(stream);
  }

  private retryPending(): void {
    for (const stream of this.pendingStreams()) void this.deliver(stream);
  }

  /** Home streams with events past their cursor, and chat subscriptions (of one task, if given). */
  private pendingStreams(taskId?: string): Stream[] {
    const homes = this.homes
      .map((h) => this.homeStream(h.platform, h.channel))
      .filter((s) => s.next(s.cursor()) !== null);
    const subs =
      taskId === undefined ? this.store.withPending() : this.store.subscriptionsOf(taskId);
    return [
      ...homes,
      ...subs.map((sub): Stream => ({
        key: `sub\0${sub.platform}\0${sub.channel}\0${sub.taskId}`,
        platform: sub.platform,
        channel: sub.channel,
        cursor: () =>
          this.store
            .subscriptionsOf(sub.taskId)
            .find((s) => s.platform === sub.platform && s.channel === sub.channel)?.cursor ??
          sub.cursor,
        next: (after) =>
          this.board.events
            .listForTask(sub.taskId, after, 100)
            .find((e) => this.kinds.has(e.kind)) ?? null,
        wants: () => true,
        advance: (eventId) => this.store.advanceCursor(sub, eventId),
      })),
    ];
  }

  private homeStream(platform: string, channel: string): Stream {
    return {
      key: `home\0${platform}`,
      platform,
      channel,
      cursor: () => this.store.homeCursor(platform) ?? 0,
      next: (after) => this.board.events.listKinds(after, NOTIFY_KINDS, 1)[0] ?? null,
      wants: (event) => {
        const origin = this.board.tasks.get(event.taskId ?? '')?.origin;
        return !(origin?.kind === 'platform' && origin.platform === platform);
      },
      advance: (eventId) => this.store.setHomeCursor(platform, eventId, this.board.clock()),
    };
  }

  /** Sends the stream's waiting events in order; stops at the first failure (retried later). */
  private async deliver(stream: Stream): Promise<void> {
    if (this.busy.has(stream.key)) return;
    this.busy.add(stream.key);
    try {
      for (let next = stream.next(stream.cursor()); next !== null; next = stream.next(next.id)) {
        if (stream.wants(next) && (this.sentUnrecorded.get(stream.key) ?? 0) < next.id) {
          const title = this.board.tasks.get(next.taskId ?? '')?.title ?? '(deleted)';
          try {
            await this.send(stream.platform, stream.channel, notificationText(title, next), {
              event: next.kind,
              eventId: next.id,
            });
          } catch (err) {
            const refusal = refusalOf(err);
            if (refusal === null) throw err;
            // Refused for good (a 4xx but 429): retrying would block every later message.
            const event = next;
            this.board.transact((tx) =>
              recordDroppedNotification(tx, event.taskId, {
                platform: stream.platform,
                channel: stream.channel,
                eventId: event.id,
                reason: refusal,
              }),
            );
          }
          this.sentUnrecorded.set(stream.key, next.id);
        }
        stream.advance(next.id);
        this.sentUnrecorded.delete(stream.key);
      }
    } catch {
      // The platform is down or refused, or the cursor could not be written: retried later.
    } finally {
      this.busy.delete(stream.key);
    }
  }
}
