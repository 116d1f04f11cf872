// The platforms subsystem: a supervisor per configured adapter, chat commands, notifications.
import type { PlatformConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { Board } from '../kanban/board.js';
import type { AdapterFactory, InboundMessage } from './adapter.js';
import { handleChatCommand, type ChatResult } from './chat-commands.js';
import { Notifier } from './notifier.js';
import type { PlatformStore } from '../kanban/store/platform-store.js';
import { recordPlatformEvent } from '../kanban/moves/records.js';
import { PlatformSupervisor, type PlatformView } from './supervisor.js';
import { createTelegram } from './telegram.js';
import { createWebhook } from './webhook.js';

export const ADAPTERS: Record<string, AdapterFactory> = {
  webhook: createWebhook,
  telegram: createTelegram,
};

export interface PlatformsDeps {
  configs: readonly PlatformConfig[];
  store: PlatformStore;
  board: Board;
  onError: (err: unknown, what: string) => void;
  /** Replaces the factory of a platform by name (tests inject misbehaving adapters). */
  factories?: Record<string, AdapterFactory>;
  notifyRetryMs?: number;
}

export class Platforms {
  private readonly supervisors = new Map<string, PlatformSupervisor>();
  private readonly notifier: Notifier;
  private readonly store: PlatformStore;

  constructor(private readonly deps: PlatformsDeps) {
    const store = deps.store;
    this.store = store;
    for (const config of deps.configs) {
      const persisted = store.state(config.name);
      const supervisor = new PlatformSupervisor({
        config,
        factory: deps.factories?.[config.name] ?? ADAPTERS[config.type]!,
        record: (kind, payload) =>
          deps.board.transact((tx) => recordPlatformEvent(tx, kind, payload)),
        persist: (view) =>
          store.setState(config.name, { ...store.state(config.name), view }, deps.board.clock()),
        persisted: (persisted?.view as Partial<PlatformView> | undefined) ?? null,
        adapterState: {
          load: () =>
            (store.state(config.name)?.adapter as Record<string, unknown> | undefined) ?? {},
          save: (adapter) =>
            store.setState(
              config.name,
              { ...store.state(config.name), adapter },
              deps.board.clock(),
            ),
        },
        onMessage: (message, handled) => void this.onMessage(config.name, message, handled),
        onError: deps.onError,
        clock: deps.board.clock,
      });
      this.supervisors.set(config.name, supervisor);
    }
    const homes = deps.configs
      .filter((c) => c.enabled && c.homeChannel !== null)
      .map((c) => ({ platform: c.name, channel: c.homeChannel! }));
    this.notifier = new Notifier(
      deps.board,
      store,
      (p, channel, text, tag) => this.get(p).send(channel, text, tag),
      homes,
      deps.notifyRetryMs ?? 5000,
    );
  }

  start(): void {
    for (const s of this.supervisors.values()) s.start();
    this.notifier.start();
  }

  get(name: string): PlatformSupervisor {
    const s = this.supervisors.get(name);
    if (!s) throw new AppError('PLATFORM_NOT_FOUND', `no platform named ${name}`);
    return s;
  }

  config(name: string): PlatformConfig {
    const c = this.deps.configs.find((p) => p.name === name);
    if (!c) throw new AppError('PLATFORM_NOT_FOUND', `no platform named ${name}`);
    return c;
  }

  views(): PlatformView[] {
    return [...this.supervisors.values()].map((s) => s.view());
  }

  notificationBacklog(): number {
    return this.notifier.backlog();
  }

  /**
   * An inbound chat message: runs the command in one transaction with `handled` (the adapter's
   * position, the delivery id), then replies through the breaker.
   */
  onMessage(
    platform: string,
    message: InboundMessage,
    handled: (taskId: string | null) => void,
  ): ChatResult {
    const result = handleChatCommand(
      this.deps.board,
      { platform, channel: message.channel, text: message.text },
      {
        subscribe: (taskId, after) =>
          this.store.subscribe(platform, message.channel, taskId, after),
        record: handled,
      },
    );
    this.get(platform)
      .send(message.channel, result.reply, { event: 'reply', eventId: null })
      .catch((err: unknown) => this.deps.onError(err, `replying on ${platform}`));
    return result;
  }

  /**
   * A signed webhook delivery: handled once, whatever the sender repeats within the replay
   * window; a repeat answers with what the first one created.
   */
  receive(
    platform: string,
    delivery: { id: string; signature: string },
    message: InboundMessage,
  ): { duplicate: boolean; taskId: string | null } {
    const seen = this.store.delivery(platform, delivery);
    if (seen) return { duplicate: true, taskId: seen.taskId };
    const { taskId } = this.onMessage(platform, message, (created) =>
      this.store.recordDelivery(platform, delivery, created, this.deps.board.clock()),
    );
    return { duplicate: false, taskId };
  }

  /**
   * Tells each connected platform's home channel that the gateway is restarting, iterating a
   * snapshot of the adapters (one may drop out meanwhile), each send bounded.
   */
  async announce(boundMs: number, notice: string): Promise<void> {
    this.notifier.stop();
    await Promise.allSettled(
      [...this.supervisors.values()].map((s) => {
        const home = this.deps.configs.find((c) => c.name === s.name)?.homeChannel;
        if (!s.connected || !home) return Promise.resolve();
        return Promise.race([
          s.send(home, notice, { event: 'restarting', eventId: null }),
          new Promise((r) => setTimeout(r, boundMs).unref()),
        ]);
      }),
    );
  }

  /** Stops every adapter, each within the bound. */
  async stop(boundMs: number): Promise<void> {
    this.notifier.stop();
    await Promise.allSettled([...this.supervisors.values()].map((s) => s.stop(boundMs)));
  }
}
