// Notifications: terminal task events go to subscribed chats; a cursor advances only after a send.
import type { Board } from '../kanban/board.js';
import type { BoardEvent } from '../kanban/types.js';
import type { PlatformStore, Subscription } from './platform-store.js';

export const NOTIFY_KINDS = [
  'completed',
  'blocked',
  'gave_up',
  'crashed',
  'timed_out',
  'archived',
] as const;

const WHAT: Record<string, string> = {
  completed: 'is done',
  blocked: 'is blocked',
  gave_up: 'was given up after repeated failures',
  crashed: 'crashed',
  timed_out: 'timed out',
  archived: 'was archived',
};

export type Sender = (
  platform: string,
  channel: string,
  text: string,
  event: string,
) => Promise<void>;

export function notificationText(title: string, event: BoardEvent): string {
  const extra = event.payload.summary ?? event.payload.reason ?? null;
  return `Task ${event.taskId} "${title}" ${WHAT[event.kind] ?? event.kind}${typeof extra === 'string' && extra ? `: ${extra}` : ''}`;
}

export class Notifier {
  private readonly busy = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly kinds = new Set<string>(NOTIFY_KINDS);

  constructor(
    private readonly board: Board,
    private readonly store: PlatformStore,
    private readonly send: Sender,
    /** Platforms with a home channel: told about tasks created elsewhere. */
    private readonly homes: readonly { platform: string; channel: string }[],
    private readonly retryMs: number,
  ) {}

  start(): void {
    this.unsubscribe = this.board.bus.subscribe((event) => this.onEvent(event));
    this.timer = setInterval(() => this.retryPending(), this.retryMs);
    this.timer.unref();
    this.retryPending();
  }

  stop(): void {
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
  }

  /** Subscribes a chat to a task from now on (after `afterEventId`). */
  subscribe(platform: string, channel: string, taskId: string, afterEventId: number): void {
    this.store.subscribe(platform, channel, taskId, afterEventId);
  }

  /** Subscriptions whose notifications are waiting (for metrics). */
  backlog(): number {
    return this.store.withPending().length;
  }

  private onEvent(event: BoardEvent): void {
    if (event.taskId === null) return;
    if (event.kind === 'created') {
      const origin = event.payload.origin as { kind?: string; platform?: string } | undefined;
      for (const home of this.homes) {
        if (origin?.kind === 'platform' && origin.platform === home.platform) continue;
        this.subscribe(home.platform, home.channel, event.taskId, event.id);
      }
      return;
    }
    if (!this.kinds.has(event.kind)) return;
    for (const sub of this.store.subscriptionsOf(event.taskId)) void this.deliver(sub);
  }

  private retryPending(): void {
    for (const sub of this.store.withPending()) void this.deliver(sub);
  }

  /** Sends the subscription's waiting events in order; stops at the first failure (retried later). */
  private async deliver(sub: Subscription): Promise<void> {
    const key = `${sub.platform}\0${sub.channel}\0${sub.taskId}`;
    if (this.busy.has(key)) return;
    this.busy.add(key);
    try {
      let cursor = sub.cursor;
      for (;;) {
        const current = this.store
          .subscriptionsOf(sub.taskId)
          .find((s) => s.platform === sub.platform && s.channel === sub.channel);
        cursor = Math.max(cursor, current?.cursor ?? cursor);
        const next = this.board.events
          .listForTask(sub.taskId, cursor, 100)
          .find((e) => this.kinds.has(e.kind));
        if (!next) return;
        const title = this.board.tasks.get(sub.taskId)?.title ?? '(deleted)';
        await this.send(sub.platform, sub.channel, notificationText(title, next), next.kind);
        this.store.advanceCursor(sub, next.id);
        cursor = next.id;
      }
    } catch {
      // The platform is down or refused: the cursor stays, the retry loop tries again.
    } finally {
      this.busy.delete(key);
    }
  }
}
