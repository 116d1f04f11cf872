// What every platform adapter offers (connect, send, stop, inbound messages); no breaker logic here.
import type { Clock } from '../clock.js';
/** What a message is about: a task event (its id is an idempotency key), a reply or a notice. */
export interface MessageTag {
  event: string;
  eventId: number | null;
}

export interface InboundMessage {
  channel: string;
  text: string;
  /** Who wrote it, as the platform names them (an approver is `<platform>:<user>`), if known. */
  user?: string;
}

/** How a failure should be treated by the supervisor. */
export type FailureKind = 'retryable' | 'permanent' | 'caller';

/** A platform failure: retryable (outage), permanent (bad credentials) or the caller's mistake. */
export class PlatformError extends Error {
  constructor(
    message: string,
    readonly kind: FailureKind,
    readonly retryAfterMs: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PlatformError';
  }
}

export interface AdapterContext {
  /**
   * Delivers an inbound message to the gateway (chat commands). `position` is the adapter's
   * state past it, saved in the same transaction as what the message created. False when it
   * could not be handled: the adapter must not move past it (it is fetched again).
   */
  onMessage(message: InboundMessage, position: Record<string, unknown>): Promise<boolean>;
  /**
   * Delivers an inbound message that carries the platform's own id for it (Slack's event_id):
   * handled once whatever repeats it. False when it could not be handled (not acknowledged).
   */
  onDelivery(message: InboundMessage, deliveryId: string): Promise<boolean>;
  /** Reports that a connected adapter lost its connection (the supervisor reconnects). */
  onDisconnect(error: Error): void;
  /** Small persistent state of the adapter (e.g. Telegram's update offset), as last saved. */
  loadState(): Record<string, unknown>;
  saveState(state: Record<string, unknown>): Promise<void>;
  /** The daemon's clock (a signature's timestamp is its wall time). */
  clock: Clock;
}

export interface PlatformAdapter {
  /** The longest text the platform accepts, in UTF-16 code units; longer texts are cut. */
  readonly maxTextLength?: number;
  /**
   * Connects (and starts receiving); rejects with a PlatformError. An adapter that reaches the
   * platform only per message (a webhook) says so: its connect proves nothing about the platform.
   */
  connect(signal: AbortSignal): Promise<void>;
  readonly connectionless?: boolean;
  /** Sends one message; rejects with a PlatformError. */
  send(channel: string, text: string, tag: MessageTag | null, signal: AbortSignal): Promise<void>;
  /** Stops receiving and releases everything. */
  stop(): Promise<void>;
}

export type AdapterFactory = (
  options: Record<string, unknown>,
  ctx: AdapterContext,
) => PlatformAdapter;
