// This daemon as a host of the board: it registers (or, restarted within its lease, takes its
// id back), renews its lease every renewSeconds, and on a shared board keeps the fence file its
// run wrappers obey and declares dead the hosts whose lease ran out (their runs end as lost).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config/schema.js';
import { RepeatLimiter } from '../../repeat-limit.js';
import type { Board } from '../board.js';
import type { Host } from '../model/types.js';
import { declareDead, joinBoard } from '../moves/hosts.js';
import type { SettlementPolicy } from '../moves/settle.js';
import type { DispatcherLog } from './log.js';
import type { Ownership } from './ownership.js';
import { writeAtomic, writeJsonAtomic } from './run-files.js';

/** The file that names this data dir's host on the board. */
export const HOST_FILE = 'host.json';
/** The file the run wrappers read: when to TERM and when to KILL their group (epoch seconds). */
export const FENCE_FILE = 'fence';
/** Seconds before the lease ends by which every worker must be gone (clock steps, reaction). */
const FENCE_MARGIN_S = 2;

export interface HostLeaseDeps {
  board: Board;
  /** Told this host's id once it has one. */
  ownership: Ownership;
  config: Config;
  policy: SettlementPolicy;
  version: string;
  log: DispatcherLog;
  /** Workers running now (reported with each renewal). */
  running: () => number;
  /** The lease is gone (declared dead, or ran out): the daemon must not go on as this host. */
  onLost: (why: string) => void;
}

export class HostLease {
  private host: Host | null = null;
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;
  private sweeping: Promise<void> | null = null;
  /** Local time (ms) until which claiming is safe: before the fence would end the workers. */
  private claimUntil = 0;
  private lost = false;
  private readonly failures = new RepeatLimiter();

  constructor(private readonly deps: HostLeaseDeps) {}

  /** This host's id on the board (once started). */
  get id(): number {
    if (!this.host) throw new Error('the host lease has not started');
    return this.host.id;
  }

  get name(): string {
    return this.deps.config.cluster.hostName;
  }

  /** It has joined the board (start() is done). */
  get joined(): boolean {
    return this.host !== null;
  }

  /** The file the run wrappers obey, or null when the board is this host's alone. */
  get fenceFile(): string | null {
    return this.deps.board.shared ? join(this.deps.config.dataDir, FENCE_FILE) : null;
  }

  /** New claims are safe: the lease is held and will be for longer than a worker's end takes. */
  claimable(): boolean {
    return !this.lost && (!this.deps.board.shared || Date.now() < this.claimUntil);
  }

  private get leaseMs(): number {
    return this.deps.config.cluster.leaseSeconds * 1000;
  }

  /**
   * Registers, or takes back the id its data dir names if that host's lease still holds. Renewals
   * start with keepRenewing().
   */
  async start(): Promise<void> {
    const { board, config } = this.deps;
    const known = readHostFile(join(config.dataDir, HOST_FILE));
    const startedAt = Date.now();
    const kept =
      known && known.name === this.name
        ? await board.transact((tx) => tx.store.hosts.renew(known.id, this.renewal(board.shared)))
        : null;
    this.host =
      kept ??
      (await board.transact((tx) =>
        joinBoard(tx, {
          name: this.name,
          capacity: config.workers.maxConcurrent,
          profiles: Object.keys(config.workers.profiles),
          version: this.deps.version,
          leaseMs: this.leaseMs,
        }),
      ));
    this.deps.ownership.hostId = this.host.id;
    writeJsonAtomic(join(config.dataDir, HOST_FILE), { id: this.host.id, name: this.name });
    this.extended(startedAt, this.host);
    this.deps.log.info(
      { hostId: this.host.id, kept: kept !== null },
      kept ? 'host lease taken back' : 'host joined the board',
    );
  }

  /** Renews every renewSeconds from now on (after adoption: a sweep comes with each renewal). */
  keepRenewing(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.renew(), this.deps.config.cluster.renewSeconds * 1000);
    this.timer.unref();
  }

  /** Stops renewing (the lease runs on; a restart within it keeps the host id and its workers). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.renewing;
    await this.sweeping;
  }

  private renewal(unexpiredOnly: boolean) {
    return {
      running: this.deps.running(),
      capacity: this.deps.config.workers.maxConcurrent,
      leaseMs: this.leaseMs,
      unexpiredOnly,
    };
  }

  private renew(): void {
    if (this.renewing || this.lost || !this.host) return;
    const id = this.host.id;
    const startedAt = Date.now();
    this.renewing = (async () => {
      try {
        const renewed = await this.deps.board.renewHost(id, this.renewal(this.deps.board.shared));
        if (!renewed) {
          this.lost = true;
          this.deps.onLost(
            `host ${id} lost its lease on the board (it ran out, or another host declared it dead)`,
          );
          return;
        }
        this.host = renewed;
        this.extended(startedAt, renewed);
        this.startSweep();
      } catch (err) {
        this.failures.report(
          (obj, msg) => this.deps.log.warn(obj, msg),
          err,
          'host lease: cannot renew; no new claims once it is about to run out',
        );
      } finally {
        this.renewing = null;
      }
    })();
  }

  /**
   * The lease was extended by a statement sent at `sentAt` (local clock): it ends no earlier
   * than sentAt + lease, whatever the two clocks say. The fence ends the workers before that.
   */
  private extended(sentAt: number, host: Host): void {
    if (!this.deps.board.shared) return;
    const leaseMs = host.leaseExpiresAt - host.renewedAt;
    const killAt = Math.floor((sentAt + leaseMs) / 1000) - FENCE_MARGIN_S;
    const graceS = Math.ceil(this.deps.config.workers.killGraceSeconds);
    const termAt = Math.max(killAt - graceS, Math.ceil(sentAt / 1000));
    // One line, replaced whole: what the run wrappers read.
    writeAtomic(this.fenceFile!, `${termAt} ${killAt}\n`);
    // A worker started just before its TERM would be ended at once: a renewal's worth earlier.
    this.claimUntil = termAt * 1000 - this.deps.config.cluster.renewSeconds * 1000;
  }

  /**
   * A sweep that waits (on a row another host holds) must not hold up the next renewals: it
   * runs beside them, one at a time.
   */
  private startSweep(): void {
    if (this.sweeping) return;
    this.sweeping = this.sweep()
      .catch((err: unknown) =>
        this.failures.report(
          (obj, msg) => this.deps.log.warn(obj, msg),
          err,
          'host lease: cannot look for dead hosts; tried again at the next renewal',
        ),
      )
      .finally(() => (this.sweeping = null));
  }

  /** Declares dead every other host whose lease ran out more than reclaimGraceSeconds ago. */
  private async sweep(): Promise<void> {
    const { board, config, policy, log } = this.deps;
    if (!board.shared) return;
    for (const host of await board.hosts.expired(config.cluster.reclaimGraceSeconds * 1000)) {
      if (host.id === this.host?.id) continue;
      const taken = await board.transact((tx) => declareDead(tx, policy, host));
      if (taken)
        log.warn(
          { deadHostId: host.id, deadHost: host.name, lostRuns: taken.lost },
          'host declared dead: its lease ran out; its runs are lost and their tasks ready again',
        );
    }
  }
}

function readHostFile(path: string): { id: number; name: string } | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { id?: unknown; name?: unknown };
    return Number.isSafeInteger(parsed.id) && typeof parsed.name === 'string'
      ? { id: parsed.id as number, name: parsed.name }
      : null;
  } catch {
    return null;
  }
}
