// Notifications: terminal task events go to subscribed chats and home channels; a cursor advances
// only after a successful send, so an outage delays notifications but loses none.
import type { Board } from '../kanban/board.js';
import { EVENT_KINDS, NOTIFY_KINDS, type BoardEvent } from '../kanban/model/events.js';
import { advanceSubscription, savePlatformState } from '../kanban/moves/platform-records.js';
import { recordDroppedNotification } from '../kanban/moves/records.js';
import { PlatformError, type MessageTag } from './adapter.js';
import type { PlatformTable } from '../kanban/store/contract.js';

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
  const payload = event.payload as {
    summary?: unknown;
    reason?: unknown;
    review?: unknown;
    pullRequest?: unknown;
    question?: unknown;
  };
  const pr = prNotice(event);
  // A question its agent asked: the question itself, however the event says it.
  const asks = typeof payload.question === 'string' ? payload.question : null;
  const extra = pr === null ? (asks ?? payload.summary ?? payload.reason ?? null) : null;
  // A completed run of a task under review: not done yet, a person is asked (docs/workers.md); one whose
  // work goes to a pull request waits for the forge instead.
  const notice =
    pr ??
    (asks !== null && event.kind === 'completed'
      ? `waits for your answer (/answer ${event.taskId} TEXT)`
      : payload.pullRequest === true
        ? 'is done; its pull request is opened or updated next'
        : payload.review === true
          ? `needs review (/approve ${event.taskId}, or /changes ${event.taskId} TEXT)`
          : (EVENT_KINDS[event.kind].notice ?? event.kind));
  return `Task ${event.taskId} "${title}" ${notice}${typeof extra === 'string' && extra ? `: ${extra}` : ''}`;
}

/** What a chat hears of a task's pull request (docs/pull-requests.md), or null for other kinds. */
function prNotice(event: BoardEvent): string | null {
  switch (event.kind) {
    case 'pr_opened':
    case 'pr_adopted':
      return `has PR #${event.payload.number} opened: ${event.payload.url}`;
    case 'pr_merged':
      return `is done: PR #${event.payload.number} merged`;
    case 'pr_closed':
      return `is blocked: PR #${event.payload.number} closed without merging`;
    case 'pr_reopened':
      return `is back in review: PR #${event.payload.number} reopened`;
    case 'pr_feedback':
      return event.payload.source === 'checks'
        ? `PR #${event.payload.number}: checks failing: ${(event.payload.checks ?? []).join(', ')} (round ${event.payload.round}), sent back to its agent`
        : `PR #${event.payload.number}: changes requested (round ${event.payload.round}), sent back to its agent`;
    case 'pr_checks_passed':
      return `is done: PR #${event.payload.number}'s checks pass`;
    case 'pr_skipped':
      return 'is done: its branch has no changes, no pull request';
    case 'pr_blocked':
      return `is blocked: ${event.payload.reason}`;
    default:
      return null;
  }
}

/** One ordered stream of notifications with its own durable cursor. */
interface Stream {
  key: string;
  platform: string;
  channel: string;
  cursor(): Promise<number>;
  /** The next notifiable event after `after`, or null. */
  next(after: number): Promise<BoardEvent | null>;
  /** Whether this stream tells about `event` at all (a home channel skips its own platform's tasks). */
  wants(event: BoardEvent): Promise<boolean>;
  advance(eventId: number): Promise<void>;
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
    private readonly store: PlatformTable,
    private readonly send: Sender,
    /** Platforms with a home channel: told about every task created elsewhere. */
    private readonly homes: readonly { platform: string; channel: string }[],
    private readonly retryMs: number,
    /** A failure to find what to send (the board unreadable); retried later. */
    private readonly onError: (err: unknown) => void,
    /** Which platforms' notifications this host sends (one host each, on a shared board). */
    private readonly holding: { holds(platform: string): boolean; holdsAny(): boolean },
  ) {}

  /** A platform became this host's: what waits for it goes now. */
  wake(): void {
    this.deliverAll();
  }

  async start(): Promise<void> {
    // A home channel starts from now: a new platform is not sent the whole history.
    for (const home of this.homes) {
      if ((await this.homeCursor(home.platform)) === null) {
        const last = await this.board.events.lastId();
        await this.board.transact((tx) =>
          savePlatformState(tx, home.platform, { homeCursor: last }),
        );
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

  /** A home channel's cursor over the event log, or null before its platform's first start. */
  private async homeCursor(platform: string): Promise<number | null> {
    const value = (await this.store.state(platform))?.homeCursor;
    return typeof value === 'number' ? value : null;
  }

  /** Streams with notifications waiting (for metrics). */
  async backlog(): Promise<number> {
    return (await this.pendingStreams()).length;
  }

  private onEvent(event: BoardEvent): void {
    if (event.taskId === null || !this.kinds.has(event.kind)) return;
    this.deliverAll(event.taskId);
  }

  private retryPending(): void {
    this.deliverAll();
  }

  private deliverAll(taskId?: string): void {
    if (!this.holding.holdsAny()) return;
    this.pendingStreams(taskId)
      .then((streams) => {
        for (const stream of streams) void this.deliver(stream);
      })
      .catch(this.onError);
  }

  /** Home streams with events past their cursor, and chat subscriptions (of one task, if given). */
  private async pendingStreams(taskId?: string): Promise<Stream[]> {
    const homes: Stream[] = [];
    for (const h of this.homes) {
      const stream = this.homeStream(h.platform, h.channel);
      if ((await stream.next(await stream.cursor())) !== null) homes.push(stream);
    }
    const subs =
      taskId === undefined
        ? await this.store.withPending()
        : await this.store.subscriptionsOf(taskId);
    return [
      ...homes,
      ...subs.map((sub): Stream => ({
        key: `sub\0${sub.platform}\0${sub.channel}\0${sub.taskId}`,
        platform: sub.platform,
        channel: sub.channel,
        cursor: async () =>
          (await this.store.subscriptionsOf(sub.taskId)).find(
            (s) => s.platform === sub.platform && s.channel === sub.channel,
          )?.cursor ?? sub.cursor,
        next: async (after) =>
          (await this.board.events.listForTask(sub.taskId, after, 100)).find((e) =>
            this.kinds.has(e.kind),
          ) ?? null,
        wants: async () => true,
        advance: (eventId) => this.board.transact((tx) => advanceSubscription(tx, sub, eventId)),
      })),
    ];
  }

  private homeStream(platform: string, channel: string): Stream {
    return {
      key: `home\0${platform}`,
      platform,
      channel,
      cursor: async () => (await this.homeCursor(platform)) ?? 0,
      next: async (after) => (await this.board.events.listKinds(after, NOTIFY_KINDS, 1))[0] ?? null,
      wants: async (event) => {
        const origin = (await this.board.tasks.get(event.taskId ?? ''))?.origin;
        return !(origin?.kind === 'platform' && origin.platform === platform);
      },
      advance: (eventId) =>
        this.board.transact((tx) => savePlatformState(tx, platform, { homeCursor: eventId })),
    };
  }

  /** Sends the stream's waiting events in order; stops at the first failure (retried later). */
  private async deliver(stream: Stream): Promise<void> {
    if (this.busy.has(stream.key) || !this.holding.holds(stream.platform)) return;
    this.busy.add(stream.key);
    try {
      for (
        let next = await stream.next(await stream.cursor());
        next !== null;
        next = await stream.next(next.id)
      ) {
        if (!this.holding.holds(stream.platform)) return;
        if ((await stream.wants(next)) && (this.sentUnrecorded.get(stream.key) ?? 0) < next.id) {
          const title = (await this.board.tasks.get(next.taskId ?? ''))?.title ?? '(deleted)';
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
            await this.board.transact((tx) =>
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
        await stream.advance(next.id);
        this.sentUnrecorded.delete(stream.key);
      }
    } catch {
      // The platform is down or refused, or the cursor could not be written: retried later.
    } finally {
      this.busy.delete(stream.key);
    }
  }
}
