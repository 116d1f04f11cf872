// Which platforms this host serves on a board several hosts share: one host at a time holds
// each platform (polls it, sends its notifications), taking it over when its holder's lease has
// run out. Checked every renewal; a host that cannot renew lets go of everything. On a board of
// its own every platform is this host's.
import type { Board } from '../kanban/board.js';
import { holdPlatform } from '../kanban/moves/platform-records.js';

/** This daemon as a host of the board, as far as holding platforms needs. */
export interface BoardHost {
  readonly id: number;
  /** Its lease holds, and will for longer than ending its work takes. */
  leaseHolds(): boolean;
}

export interface PlatformHoldsDeps {
  board: Board;
  names: readonly string[];
  /** This host, once it has joined the board (null before). */
  host: () => BoardHost | null;
  everyMs: number;
  /** How long after its lease ran out a holder's platforms may be taken. */
  graceMs: number;
  /** The platform is this host's now; false if it could not take it up (asked again later). */
  onGained: (name: string) => Promise<boolean>;
  onLost: (name: string) => void;
  onError: (err: unknown) => void;
}

export class PlatformHolds {
  private readonly held = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(private readonly deps: PlatformHoldsDeps) {}

  get shared(): boolean {
    return this.deps.board.shared;
  }

  /** Whether this host serves the platform now: held, and its lease not about to run out. */
  holds(name: string): boolean {
    return !this.shared || (this.held.has(name) && this.deps.host()?.leaseHolds() === true);
  }

  /** This host holds some platform (a standby host has nothing to notify). */
  holdsAny(): boolean {
    return !this.shared || this.held.size > 0;
  }

  /** The host whose platforms these are (null on a board of its own). */
  hostId(): number | null {
    return this.shared ? (this.deps.host()?.id ?? null) : null;
  }

  async start(): Promise<void> {
    if (!this.shared) return;
    await this.check();
    this.timer = setInterval(() => void this.check(), this.deps.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (const name of this.deps.names) {
        const holds = await this.tryHold(name);
        if (holds && !this.held.has(name)) {
          if (await this.deps.onGained(name)) this.held.add(name);
        } else if (!holds && this.held.has(name)) {
          this.held.delete(name);
          this.deps.onLost(name);
        }
      }
    } finally {
      this.checking = false;
    }
  }

  private async tryHold(name: string): Promise<boolean> {
    const host = this.deps.host();
    if (!host?.leaseHolds()) return false;
    try {
      return await this.deps.board.transact((tx) =>
        holdPlatform(tx, name, host.id, this.deps.graceMs),
      );
    } catch (err) {
      // The board cannot be reached: held as long as the lease is (then let go, above).
      this.deps.onError(err);
      return this.held.has(name);
    }
  }
}
