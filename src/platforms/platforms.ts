// The platforms subsystem: a supervisor per configured adapter, chat commands, notifications.
import type { Clock } from '../clock.js';
import type { PlatformConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { ApprovalRules } from '../kanban/approval-rules.js';
import type { Board } from '../kanban/board.js';
import type { AdapterFactory, InboundMessage } from './adapter.js';
import { handleChatCommand } from './chat-commands.js';
import { Notifier } from './notifier.js';
import type { PlatformTable } from '../kanban/store/contract.js';
import {
  holdsPlatform,
  recordDelivery,
  savePlatformState,
} from '../kanban/moves/platform-records.js';
import { recordPlatformEvent } from '../kanban/moves/records.js';
import type { Tx } from '../kanban/moves/tx.js';
import { PlatformHolds, type BoardHost } from './platform-holds.js';
import { PlatformSupervisor, type PlatformView } from './supervisor.js';
import { createDiscord } from './discord.js';
import { createMatrix } from './matrix.js';
import { createSlack } from './slack.js';
import { createTelegram } from './telegram.js';
import { createWebhook } from './webhook.js';

export const ADAPTERS: Record<string, AdapterFactory> = {
  webhook: createWebhook,
  telegram: createTelegram,
  matrix: createMatrix,
  slack: createSlack,
  discord: createDiscord,
};

export interface PlatformsDeps {
  configs: readonly PlatformConfig[];
  store: PlatformTable;
  board: Board;
  onError: (err: unknown, what: string) => void;
  /** Replaces the factory of a platform by name (tests inject misbehaving adapters). */
  factories?: Record<string, AdapterFactory>;
  notifyRetryMs?: number;
  /** This daemon as a host of a shared board (null until it has joined). */
  host?: () => BoardHost | null;
  /** How often platform holds are renewed, and how long a dead holder's are kept (ms). */
  holdEveryMs?: number;
  holdGraceMs?: number;
  /** Whose approval a task's first run waits for (docs/mcp.md). */
  approvals: ApprovalRules;
}

export class Platforms {
  private readonly supervisors = new Map<string, PlatformSupervisor>();
  private readonly notifier: Notifier;
  /** The last reply under way per platform: replies leave in the order the messages came. */
  private readonly replies = new Map<string, Promise<void>>();
  /** Each adapter's state as last committed (Telegram's offset): read often, written in moves. */
  private readonly adapterStates = new Map<string, Record<string, unknown>>();
  /** Which platforms this host serves when other hosts share the board. */
  private readonly holds: PlatformHolds;

  /** The board's clock: a signed delivery's timestamp is checked on it. */
  get clock(): Clock {
    return this.deps.board.clock;
  }

  /** `persisted`: each platform's saved state, read before (see openPlatforms). */
  constructor(
    private readonly deps: PlatformsDeps,
    persisted: ReadonlyMap<string, Record<string, unknown>>,
  ) {
    const { board } = deps;
    const transact = (what: string, fn: (tx: Tx) => Promise<void>) => {
      board.transact(fn).catch((err: unknown) => deps.onError(err, what));
    };
    for (const config of deps.configs) {
      const saved = persisted.get(config.name) ?? {};
      this.adapterStates.set(
        config.name,
        (saved.adapter as Record<string, unknown> | undefined) ?? {},
      );
      const supervisor = new PlatformSupervisor({
        config,
        factory: deps.factories?.[config.name] ?? ADAPTERS[config.type]!,
        record: (kind, payload) => transact(kind, (tx) => recordPlatformEvent(tx, kind, payload)),
        persist: (view) =>
          transact('persist', (tx) => savePlatformState(tx, config.name, { view })),
        persisted: (saved.view as Partial<PlatformView> | undefined) ?? null,
        adapterState: {
          load: () => this.adapterStates.get(config.name)!,
          save: async (adapter) => {
            await board.transact(async (tx) => {
              await this.fence(tx, config.name);
              await savePlatformState(tx, config.name, { adapter });
            });
            this.adapterStates.set(config.name, adapter);
          },
        },
        onMessage: async (message, position) => {
          await this.onMessage(config.name, message, { position });
        },
        onDelivery: async (message, id) => {
          await this.onMessage(config.name, message, { delivery: { id, signature: config.type } });
        },
        onError: deps.onError,
        clock: board.clock,
      });
      this.supervisors.set(config.name, supervisor);
    }
    const homes = deps.configs
      .filter((c) => c.enabled && c.homeChannel !== null)
      .map((c) => ({ platform: c.name, channel: c.homeChannel! }));
    this.holds = new PlatformHolds({
      board,
      names: deps.configs.filter((c) => c.enabled).map((c) => c.name),
      host: deps.host ?? (() => null),
      everyMs: deps.holdEveryMs ?? 5000,
      graceMs: deps.holdGraceMs ?? 20_000,
      onGained: (name) => this.gained(name),
      // A webhook is reached per message: it goes on receiving and replying; only its
      // notifications move to the holder.
      onLost: (name) => {
        const supervisor = this.get(name);
        if (!supervisor.connectionless) supervisor.standby();
      },
      onError: (err) => deps.onError(err, 'holding platforms'),
    });
    this.notifier = new Notifier(
      board,
      deps.store,
      (p, channel, text, tag) => this.get(p).send(channel, text, tag),
      homes,
      deps.notifyRetryMs ?? 5000,
      (err) => deps.onError(err, 'notifying'),
      this.holds,
    );
  }

  /**
   * Starts every adapter; on a shared board a polling one only once this host holds it (a
   * webhook is reached per message, so it serves replies on every host).
   */
  async start(): Promise<void> {
    for (const s of this.supervisors.values()) s.start(this.holds.shared && !s.connectionless);
    await this.holds.start();
    await this.notifier.start();
  }

  /** Taken over: the adapter goes on from where its last holder left it (Telegram's offset). */
  private async gained(name: string): Promise<boolean> {
    try {
      const saved = (await this.deps.store.state(name)) ?? {};
      this.adapterStates.set(name, (saved.adapter as Record<string, unknown> | undefined) ?? {});
    } catch (err) {
      this.deps.onError(err, `reading ${name}'s state`);
      return false;
    }
    this.get(name).take();
    this.notifier.wake();
    return true;
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

  /** Resolves once the platform events and state written so far are committed. */
  recorded(): Promise<void> {
    return this.deps.board.settled();
  }

  notificationBacklog(): Promise<number> {
    return this.notifier.backlog();
  }

  /**
   * An inbound chat message: runs the command in one transaction with what marks it handled
   * (the adapter's `position`, or the signed `delivery`, whose repeat creates nothing), then
   * replies through the breaker.
   */
  async onMessage(
    platform: string,
    message: InboundMessage,
    handled: {
      position?: Record<string, unknown>;
      delivery?: { id: string; signature: string };
    },
  ): Promise<{ duplicate: boolean; taskId: string | null }> {
    const { position, delivery } = handled;
    const result = await this.deps.board.transact(async (tx) => {
      if (position) await this.fence(tx, platform);
      if (delivery) {
        const seen = await tx.store.platforms.delivery(platform, delivery);
        if (seen) return { duplicate: true, taskId: seen.taskId, reply: null };
      }
      const { reply, taskId } = await handleChatCommand(
        tx,
        {
          platform,
          channel: message.channel,
          text: message.text,
          ...(message.user === undefined ? {} : { user: message.user }),
        },
        this.deps.approvals,
      );
      if (position) await savePlatformState(tx, platform, { adapter: position });
      if (delivery) await recordDelivery(tx, platform, delivery, taskId);
      return { duplicate: false, taskId, reply };
    });
    if (position) this.adapterStates.set(platform, position);
    if (result.reply !== null) this.reply(platform, message.channel, result.reply);
    return { duplicate: result.duplicate, taskId: result.taskId };
  }

  /**
   * A polling adapter's position is written on a shared board only while this host holds the
   * platform: a host taking it over never handles a message its last holder handled, and a
   * holder that froze cannot move the position back.
   */
  private async fence(tx: Tx, platform: string): Promise<void> {
    const hostId = this.holds.hostId();
    if (hostId !== null && !(await holdsPlatform(tx, platform, hostId)))
      throw new AppError(
        'PLATFORM_UNAVAILABLE',
        `platform ${platform} is no longer this host's; its messages are left to its holder`,
      );
  }

  /** Sends a reply through the breaker once the replies before it on this platform have gone. */
  private reply(platform: string, channel: string, text: string): void {
    const previous = this.replies.get(platform) ?? Promise.resolve();
    const sent = previous
      .then(() => this.get(platform).send(channel, text, { event: 'reply', eventId: null }))
      .catch((err: unknown) => this.deps.onError(err, `replying on ${platform}`));
    this.replies.set(platform, sent);
    void sent.then(() => {
      if (this.replies.get(platform) === sent) this.replies.delete(platform);
    });
  }

  /**
   * A signed webhook delivery: handled once, whatever the sender repeats within the replay
   * window; a repeat answers with what the first one created.
   */
  async receive(
    platform: string,
    delivery: { id: string; signature: string },
    message: InboundMessage,
  ): Promise<{ duplicate: boolean; taskId: string | null }> {
    const handled = await this.onMessage(platform, message, { delivery });
    // A message, not a delivery: a sender's repeat of one is not counted again.
    if (!handled.duplicate) this.get(platform).countReceived();
    return handled;
  }

  /**
   * Tells each connected platform's home channel that the gateway is restarting, iterating a
   * snapshot of the adapters (one may drop out meanwhile), each send bounded.
   */
  async announce(boundMs: number, notice: string): Promise<void> {
    this.holds.stop();
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
    this.holds.stop();
    this.notifier.stop();
    await Promise.allSettled([...this.supervisors.values()].map((s) => s.stop(boundMs)));
  }
}

/** Reads every configured platform's saved state, then builds the subsystem. */
export async function openPlatforms(deps: PlatformsDeps): Promise<Platforms> {
  const persisted = new Map<string, Record<string, unknown>>();
  for (const { name } of deps.configs) persisted.set(name, (await deps.store.state(name)) ?? {});
  return new Platforms(deps, persisted);
}
