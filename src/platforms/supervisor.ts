// One platform's supervisor: its opossum breaker around connect and send, its connection moved
// by the table in connection.ts (states, retry delays), its outages kept by outage-ledger.ts.
import type { Clock } from '../clock.js';
import type { PlatformEventKind } from '../kanban/moves/records.js';
import CircuitBreaker from 'opossum';
import type { PlatformConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import {
  PlatformError,
  type MessageTag,
  type AdapterContext,
  type AdapterFactory,
  type InboundMessage,
  type PlatformAdapter,
} from './adapter.js';
import { fitText } from './message-text.js';
import { OutageLedger } from './outage-ledger.js';
import {
  halts,
  nextState,
  retryDelay,
  type ConnectionEvent,
  type PlatformState,
} from './connection.js';

/** `standby`: another host of a shared board holds this platform; nothing connects here. */
export type BreakerState = 'closed' | 'open' | 'half_open';

export interface PlatformView {
  name: string;
  type: string;
  state: PlatformState;
  homeChannel: string | null;
  breaker: {
    state: BreakerState;
    failures: number;
    rejects: number;
    timeouts: number;
    lastError: string | null;
    openedAt: number | null;
    nextAttemptAt: number | null;
    /** When the current outage began (the breaker first opened), or null when closed. */
    outageSince: number | null;
    /** Failed probes of the current outage: each re-opened the breaker without an event. */
    reopened: number;
  };
  counters: { sent: number; sendFailures: number; received: number; connects: number };
  nextRetryAt: number | null;
}

export interface SupervisorDeps {
  config: PlatformConfig;
  factory: AdapterFactory;
  /** Writes a platform event (platform_connected, breaker_opened, …); failures are its own. */
  record: (kind: PlatformEventKind, payload: { platform: string; [key: string]: unknown }) => void;
  /** Persists the view, so /platform after a restart shows the last known error. */
  persist: (view: PlatformView) => void;
  persisted: Partial<PlatformView> | null;
  adapterState: {
    load(): Record<string, unknown>;
    save(state: Record<string, unknown>): Promise<void>;
  };
  /** Handles an inbound message, saving `position` with what it created. */
  onMessage: (message: InboundMessage, position: Record<string, unknown>) => Promise<void>;
  /** Handles an inbound message by the platform's id for it, once whatever repeats it. */
  onDelivery: (message: InboundMessage, deliveryId: string) => Promise<void>;
  onError: (err: unknown, what: string) => void;
  clock: Clock;
}

/** Runs an adapter call so that a synchronous throw becomes a rejection. */
function guarded<T>(fn: () => Promise<T>): Promise<T> {
  return Promise.resolve().then(fn);
}

function describe(err: unknown): string {
  if ((err as { code?: string }).code === 'ETIMEDOUT') return 'timed out';
  return err instanceof Error ? err.message : String(err);
}

export class PlatformSupervisor {
  private state: PlatformState = 'connecting';
  /**
   * The last send failed for want of the platform: a connectionless adapter (a webhook) that
   * connects without any I/O shows this as `retrying` until a send succeeds again.
   */
  private sendsFailing = false;
  /** No message is sent before this time (ms): the wait a 429 asked for. */
  private sendsAfter = 0;
  private readonly breaker: CircuitBreaker<[(signal: AbortSignal) => Promise<unknown>], unknown>;
  private readonly adapter: PlatformAdapter;
  private lastError: string | null;
  private openedAt: number | null = null;
  /** The breaker's current outage, told by three events (outage-ledger.ts). */
  private readonly outages: OutageLedger;
  /** The breaker is being put back as a restart found it: not a failed probe. */
  private restoring = false;
  /** The operator reset the breaker (resume, reconnect): the outage ends by their word. */
  private resetByOperator = false;
  private nextRetryAt: number | null = null;
  private attempts = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly counters: PlatformView['counters'];

  constructor(private readonly deps: SupervisorDeps) {
    const b = deps.config.breaker;
    this.breaker = new CircuitBreaker(
      (op: (signal: AbortSignal) => Promise<unknown>) => op(AbortSignal.timeout(b.timeoutMs)),
      {
        timeout: b.timeoutMs,
        errorThresholdPercentage: b.errorThresholdPercentage,
        resetTimeout: b.resetTimeoutMs,
        volumeThreshold: b.volumeThreshold,
        // A caller's mistake (unknown chat, bad request) says nothing about the platform's health.
        errorFilter: (err: unknown) => err instanceof PlatformError && err.kind === 'caller',
      },
    );
    const persisted = deps.persisted?.breaker;
    this.outages = new OutageLedger(
      persisted?.outageSince != null && persisted.state !== 'closed'
        ? { since: persisted.outageSince, reopened: persisted.reopened ?? 0 }
        : null,
    );
    this.breaker.on('open', () => {
      const at = deps.clock.wall();
      this.openedAt = at;
      const what = this.outages.opened(at, this.restoring);
      if (what === 'reopened') this.persist();
      if (what !== 'began') return;
      this.record('breaker_opened', {
        lastError: this.lastError,
        nextAttemptAt: this.nextAttemptAt(),
      });
    });
    this.breaker.on('halfOpen', () => {
      if (this.outages.firstProbe()) this.record('breaker_half_open', {});
    });
    this.breaker.on('close', () => {
      this.openedAt = null;
      this.endOutage();
    });
    this.lastError = persisted?.lastError ?? null;
    this.counters = {
      sent: 0,
      sendFailures: 0,
      received: 0,
      connects: 0,
      ...deps.persisted?.counters,
    };
    const ctx: AdapterContext = {
      onMessage: async (message, position) => {
        this.counters.received++;
        try {
          await deps.onMessage(message, position);
          return true;
        } catch (err) {
          this.deps.onError(err, 'inbound message');
          return false;
        }
      },
      onDelivery: async (message, deliveryId) => {
        this.counters.received++;
        try {
          await deps.onDelivery(message, deliveryId);
          return true;
        } catch (err) {
          this.deps.onError(err, 'inbound message');
          return false;
        }
      },
      onDisconnect: (err) => this.safely(() => this.disconnected(err), 'disconnect'),
      loadState: () => deps.adapterState.load(),
      saveState: (state) => deps.adapterState.save(state),
      clock: deps.clock,
    };
    this.adapter = deps.factory(deps.config.options, ctx);
  }

  get name(): string {
    return this.deps.config.name;
  }

  /** A message reached this platform by another way than its adapter (a signed webhook). */
  countReceived(): void {
    this.counters.received++;
  }

  get connected(): boolean {
    return this.state === 'connected';
  }

  /** Reached per message (a webhook): nothing to poll, so any host may serve it. */
  get connectionless(): boolean {
    return this.adapter.connectionless === true;
  }

  /** Starts connecting, or in standby until take() when another host holds the platform. */
  start(standby = false): void {
    if (!this.deps.config.enabled) {
      this.state = 'disabled';
      return;
    }
    if (standby) {
      this.state = 'standby';
      return;
    }
    const persisted = this.deps.persisted?.breaker;
    if (persisted?.state === 'open' && (persisted.nextAttemptAt ?? 0) > this.deps.clock.wall()) {
      // Still inside the open window it had: stay open until the reset timeout probes again.
      this.restoring = true;
      try {
        this.breaker.open();
      } finally {
        this.restoring = false;
      }
      this.openedAt = persisted.openedAt ?? this.deps.clock.wall();
    }
    void this.connect();
  }

  view(): PlatformView {
    const stats = this.breaker.stats;
    return {
      name: this.deps.config.name,
      type: this.deps.config.type,
      state: this.state === 'connected' && this.sendsFailing ? 'retrying' : this.state,
      homeChannel: this.deps.config.homeChannel,
      breaker: {
        state: this.breaker.opened ? 'open' : this.breaker.halfOpen ? 'half_open' : 'closed',
        failures: stats.failures,
        rejects: stats.rejects,
        timeouts: stats.timeouts,
        lastError: this.lastError,
        openedAt: this.breaker.opened ? this.openedAt : null,
        nextAttemptAt: this.nextAttemptAt(),
        outageSince: this.outages.current?.since ?? null,
        reopened: this.outages.current?.reopened ?? 0,
      },
      counters: { ...this.counters },
      nextRetryAt: this.nextRetryAt,
    };
  }

  /** Sends through the breaker; 503 PLATFORM_UNAVAILABLE (with Retry-After) while it cannot. */
  async send(channel: string, text: string, tag: MessageTag | null = null): Promise<void> {
    if (this.state === 'standby') {
      throw new AppError(
        'PLATFORM_UNAVAILABLE',
        `platform ${this.name} is served by another host of the board; send through that host`,
        { headers: { 'retry-after': '5' } },
      );
    }
    if (this.state === 'paused' || this.state === 'failed' || this.state === 'disabled') {
      throw new AppError('PLATFORM_UNAVAILABLE', `platform ${this.name} is ${this.state}`, {
        headers: { 'retry-after': '60' },
      });
    }
    const wait = this.sendsAfter - this.deps.clock.wall();
    if (wait > 0) {
      // The platform asked for a pause (a 429's Retry-After): nothing is sent before it ends.
      throw new AppError(
        'PLATFORM_UNAVAILABLE',
        `platform ${this.name} asked to wait ${Math.ceil(wait / 1000)} s before the next message (rate limited)`,
        { headers: { 'retry-after': String(Math.ceil(wait / 1000)) } },
      );
    }
    const fitted = fitText(text, this.adapter.maxTextLength);
    try {
      await this.breaker.fire((signal) =>
        guarded(() => this.adapter.send(channel, fitted, tag, signal)),
      );
      this.counters.sent++;
      this.sendsFailing = false;
      if (!this.breaker.opened && !this.breaker.halfOpen) this.endOutage();
      this.persist();
    } catch (err) {
      this.counters.sendFailures++;
      if (err instanceof PlatformError && err.retryAfterMs !== null)
        this.sendsAfter = this.deps.clock.wall() + err.retryAfterMs;
      if ((err as { code?: string }).code !== 'EOPENBREAKER') this.lastError = describe(err);
      // The platform itself cannot be reached (not: it refused this one message).
      if (!(err instanceof PlatformError && err.kind === 'caller')) this.sendsFailing = true;
      this.persist();
      throw this.unavailable(err);
    }
  }

  pause(): void {
    this.refuseStandby();
    if (!nextState(this.state, 'pause')) return;
    this.clearRetry();
    this.move('pause');
    this.record('platform_paused', {});
    void this.stopAdapter();
  }

  /** Resume and reconnect both reset the breaker and try to connect now. */
  resume(): void {
    const wasPaused = this.state === 'paused';
    this.reconnect();
    if (wasPaused) this.record('platform_resumed', {});
  }

  reconnect(): void {
    this.refuseStandby();
    if (!nextState(this.state, 'reconnect')) return;
    this.clearRetry();
    this.resetByOperator = true;
    try {
      this.breaker.close();
    } finally {
      this.resetByOperator = false;
    }
    this.sendsFailing = false;
    this.attempts = 0;
    this.move('reconnect');
    void this.connect();
  }

  /** The operator's pause, resume and reconnect belong to the host that holds the platform. */
  private refuseStandby(): void {
    if (this.state === 'standby')
      throw new AppError(
        'PLATFORM_UNAVAILABLE',
        `platform ${this.name} is served by another host of the board; operate it through that host (GET /hosts names them)`,
        { headers: { 'retry-after': '5' } },
      );
  }

  /** Another host holds the platform now: this one stops polling and sending. */
  standby(): void {
    // Paused, failed or disabled: nothing polls here already, and the operator's word stays.
    if (!nextState(this.state, 'standby')) return;
    this.clearRetry();
    this.move('standby');
    void this.stopAdapter();
  }

  /** This host holds the platform (again): it connects. */
  take(): void {
    if (this.stopped || !nextState(this.state, 'take')) return;
    this.attempts = 0;
    this.move('take');
    void this.connect();
  }

  /** Stops the adapter within `boundMs`; a hung stop is abandoned, never waited on forever. */
  async stop(boundMs: number): Promise<void> {
    this.stopped = true;
    this.clearRetry();
    await Promise.race([this.stopAdapter(), new Promise((r) => setTimeout(r, boundMs).unref())]);
    this.breaker.shutdown();
  }

  /** Stopped, paused, disabled or failed: nothing should (re)connect. */
  private halted(): boolean {
    return this.stopped || halts(this.state);
  }

  private async connect(): Promise<void> {
    if (this.halted()) return;
    this.nextRetryAt = null;
    try {
      await this.breaker.fire((signal) => guarded(() => this.adapter.connect(signal)));
      // Paused, stopped or standing by while it connected: what it opened is closed again.
      if (this.halted()) return void this.stopAdapter();
      this.attempts = 0;
      this.counters.connects++;
      this.move('connected');
      this.record('platform_connected', {});
      // An outage carried over a restart whose breaker never had to open again is over too,
      // when connecting reached the platform (a webhook's connect reaches nothing).
      if (!this.adapter.connectionless && !this.breaker.opened && !this.breaker.halfOpen)
        this.endOutage();
    } catch (err) {
      if (this.halted()) return;
      this.failedConnect(err);
    }
  }

  private failedConnect(err: unknown): void {
    if ((err as { code?: string }).code !== 'EOPENBREAKER') this.lastError = describe(err);
    if (err instanceof PlatformError && err.kind === 'permanent') {
      this.move('refused');
      this.record('platform_disconnected', { error: this.lastError, permanent: true });
      return;
    }
    this.attempts++;
    const delay = retryDelay({
      attempts: this.attempts,
      resetTimeoutMs: this.deps.config.breaker.resetTimeoutMs,
      untilProbeMs: this.breaker.opened
        ? Math.max(0, (this.nextAttemptAt() ?? 0) - this.deps.clock.wall())
        : 0,
      retryAfterMs: err instanceof PlatformError ? (err.retryAfterMs ?? 0) : 0,
      random: Math.random(),
    });
    this.move('failed');
    this.nextRetryAt = this.deps.clock.wall() + delay;
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  private disconnected(err: Error): void {
    if (this.state !== 'connected') return;
    this.lastError = describe(err);
    this.record('platform_disconnected', {
      error: this.lastError,
      permanent: err instanceof PlatformError && err.kind === 'permanent',
    });
    this.failedConnect(err);
  }

  /** The breaker closed: the outage is recorded once, with how often it re-opened. */
  private endOutage(): void {
    const ended = this.outages.end(this.deps.clock.wall(), this.resetByOperator);
    if (ended) this.record('breaker_closed', { ...ended });
  }

  private unavailable(err: unknown): AppError {
    if (err instanceof PlatformError && err.kind === 'caller') {
      return new AppError('BAD_REQUEST', `${this.name}: ${err.message}`, { cause: err });
    }
    const retry = Math.max(
      1,
      Math.ceil(
        ((this.nextAttemptAt() ?? this.deps.clock.wall() + 1000) - this.deps.clock.wall()) / 1000,
      ),
    );
    const why =
      (err as { code?: string }).code === 'EOPENBREAKER'
        ? 'its circuit breaker is open'
        : describe(err);
    return new AppError('PLATFORM_UNAVAILABLE', `platform ${this.name} is unavailable: ${why}`, {
      cause: err,
      headers: { 'retry-after': String(retry) },
    });
  }

  private nextAttemptAt(): number | null {
    return this.breaker.opened && this.openedAt !== null
      ? this.openedAt + this.deps.config.breaker.resetTimeoutMs
      : null;
  }

  private async stopAdapter(): Promise<void> {
    try {
      await guarded(() => this.adapter.stop());
    } catch (err) {
      this.deps.onError(err, `stopping ${this.name}`);
    }
  }

  private clearRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.nextRetryAt = null;
  }

  /** Moves the connection by its table (connection.ts); a happening with no move changes nothing. */
  private move(event: ConnectionEvent): void {
    const next = nextState(this.state, event);
    if (next === null) return;
    this.state = next;
    this.persist();
  }

  private record(kind: PlatformEventKind, payload: Record<string, unknown>): void {
    this.safely(() => this.deps.record(kind, { platform: this.name, ...payload }), kind);
    this.persist();
  }

  private persist(): void {
    // The holder's view is the platform's: a host standing by has nothing to say of it.
    if (this.state === 'standby') return;
    this.safely(() => this.deps.persist(this.view()), 'persist');
  }

  private safely(fn: () => void, what: string): void {
    try {
      fn();
    } catch (err) {
      this.deps.onError(err, what);
    }
  }
}
