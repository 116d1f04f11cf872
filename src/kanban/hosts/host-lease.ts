// This daemon as a host of the board: it registers (or, restarted within its lease, takes its
// id back), renews its lease every renewSeconds, and on a shared board tells its fence keeper
// (fence.ts) each new deadline and declares dead the hosts whose lease ran out (their runs end
// as lost).
import { systemClock } from '../../clock.js';
import type { Config } from '../../config/schema.js';
import { RepeatLimiter } from '../../repeat-limit.js';
import type { Board } from '../board.js';
import type { Host } from '../model/types.js';
import type { ProcessIdentity } from '../../proc/index.js';
import { Fence } from './fence.js';
import { joinBoard } from '../moves/hosts.js';
import type { SettlementPolicy } from '../moves/settle.js';
import type { DispatcherLog } from '../dispatch/log.js';
import type { Ownership } from './ownership.js';
import { DeadHostSweeper } from './dead-host-sweeper.js';
import { fenceTimes } from './fence-times.js';
import { HOST_FILE, readHostIdentity, writeHostIdentity } from './host-identity.js';
import { FENCE_NOW, legacyFenceLine, writeLegacyFence } from './legacy-fence-file.js';

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
  /**
   * The lease is gone (declared dead, or ran out): this host must end what is left of its runs,
   * then join again as a new host (rejoin()).
   */
  onLost: (why: string) => void;
  /** New claims may have become safe: a fence keeper just said it is up. */
  onGuarding: () => void;
}

/** What /ready says of this host: ok, degraded (cannot renew: no new claims) or down. */
export interface HostStatus {
  status: 'ok' | 'degraded' | 'down';
  detail?: string;
}

export class HostLease {
  private host: Host | null = null;
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;
  private readonly sweeper: DeadHostSweeper;
  /** Local time (ms) until which claiming is safe: before the fence would end the workers. */
  private claimUntil = 0;
  /** When the lease ends at the earliest, on the boot clock (a shared board). */
  private leaseEnd = Infinity;
  /** Why the lease is gone, until this host has joined again; null while it holds. */
  private lostWhy: string | null = null;
  /** What the last attempt to join again answered. */
  private joinError: string | null = null;
  /** The last renewal's failure, until one succeeds. */
  private renewError: string | null = null;
  private readonly failures = new RepeatLimiter();
  /** What ends this host's runs before its lease can run out (a shared board), or null. */
  private readonly fence: Fence | null;
  /** The lease this daemon found in its data dir was taken back (start()). */
  private kept = false;

  constructor(private readonly deps: HostLeaseDeps) {
    this.fence = deps.board.shared
      ? new Fence(
          deps.config.dataDir,
          deps.log,
          deps.config.workerEnv,
          deps.board.clock,
          deps.onGuarding,
        )
      : null;
    this.sweeper = new DeadHostSweeper(deps);
  }

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

  /** A run of this host: ended at the fence unless released first (a shared board only). */
  guard(runId: string, leader: ProcessIdentity | null, cgroup: string | null): void {
    this.fence?.guard(runId, leader, cgroup);
  }

  release(runId: string): void {
    this.fence?.release(runId);
  }

  /** The lease is held, and will be for longer than a worker's end takes. */
  leaseHolds(): boolean {
    return this.lostWhy === null && (!this.fence || this.deps.board.clock.boot() < this.claimUntil);
  }

  /** New claims are safe: the lease holds, and a worker started now is guarded by the fence. */
  claimable(): boolean {
    return this.leaseHolds() && (!this.fence || this.fence.guarding);
  }

  /**
   * A worker may start now for `runId` (claimable), or null. On a shared board the run is then
   * guarded at the fence before its fork (by its cgroup and marker: its leader is not known
   * yet), and `until` is the fence's TERM on the boot clock: the wrapper starts no worker past
   * it, so a fork held up past the lease starts nothing beside another host's run.
   */
  admit(runId: string, cgroup: string | null): { until: number | null } | null {
    if (!this.claimable()) return null;
    if (!this.fence) return { until: null };
    this.fence.guard(runId, null, cgroup);
    // Handed to the keeper's pipe now, or (its pipe full) not guarded before the fork.
    if (!this.fence.guarding) {
      this.fence.release(runId);
      return null;
    }
    return { until: this.fence.termAt };
  }

  /** The lease is gone and the host has not joined again yet. */
  get lost(): boolean {
    return this.lostWhy !== null;
  }

  /** For /ready: whether this host serves the board, and if not, what it is doing about it. */
  status(): HostStatus {
    if (this.lostWhy !== null)
      return {
        status: 'down',
        detail: `${this.lostWhy}; ending its runs and joining the board again as a new host${this.joinError ? ` (last try: ${this.joinError})` : ''}`,
      };
    if (!this.joined) return { status: 'down', detail: 'joining the board' };
    const overdue = this.fence ? this.deps.board.clock.boot() - this.leaseEnd : -1;
    if (overdue >= 0)
      return {
        status: 'down',
        detail: `its lease ran out ${Math.round(overdue / 1000)} s ago without a renewal${this.renewError ? ` (${this.renewError})` : ''}; its runs were ended at the fence, and it joins the board again as a new host once the database answers`,
      };
    if (this.fence && !this.fence.guarding)
      return {
        status: 'degraded',
        detail:
          'its fence keeper is being started (again), has not said it is up yet, or has not yet taken what it was sent; no new claims meanwhile',
      };
    if (!this.leaseHolds())
      return {
        status: 'degraded',
        detail: `cannot renew its lease${this.renewError ? ` (${this.renewError})` : ''}; no new claims, and its workers are ended before the lease runs out`,
      };
    return { status: 'ok' };
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
    const known = readHostIdentity(config.dataDir);
    const startedAt = this.deps.board.clock.boot();
    const kept =
      known && known.name === this.name
        ? await board.transact((tx) => tx.store.hosts.renew(known.id, this.renewal(board.shared)))
        : null;
    this.kept = kept !== null;
    this.joinedAs(kept ?? (await this.register()), startedAt, kept !== null);
  }

  /**
   * Once the runs adopted at start are guarded by this daemon's fence: the keepers of earlier
   * daemons of this data dir go, if this host took their lease back (else their fence has come,
   * and they finish ending what was theirs).
   */
  adopted(): void {
    const fence = this.fence;
    if (this.kept && fence) fence.whenUp(() => fence.relieveEarlier());
  }

  /**
   * Joins the board again as a new host, after the lease was lost and every run of this host
   * has been ended (the dispatcher's rejoin): its old id is dead, or about to be declared so.
   * A failure (the database still unreachable) is thrown, and said by status().
   */
  async rejoin(): Promise<void> {
    const startedAt = this.deps.board.clock.boot();
    try {
      this.joinedAs(await this.register(), startedAt, false);
    } catch (err) {
      this.joinError = (err as Error).message;
      throw err;
    }
  }

  private register(): Promise<Host> {
    const { config } = this.deps;
    return this.deps.board.transact((tx) =>
      joinBoard(tx, {
        name: this.name,
        capacity: config.workers.maxConcurrent,
        profiles: Object.keys(config.workers.profiles),
        version: this.deps.version,
        leaseMs: this.leaseMs,
      }),
    );
  }

  private joinedAs(host: Host, sentAt: number, kept: boolean): void {
    this.host = host;
    this.lostWhy = null;
    this.joinError = null;
    this.renewError = null;
    this.deps.ownership.hostId = host.id;
    this.extended(sentAt, host);
    try {
      writeHostIdentity(this.deps.config.dataDir, { id: host.id, name: this.name });
    } catch (err) {
      // Only a restart's taking the id back needs it: without it, a restart joins as a new host.
      this.deps.log.warn({ err }, `host: cannot record its id in ${HOST_FILE}`);
    }
    this.deps.log.info(
      { hostId: host.id, kept },
      kept ? 'host lease taken back' : 'host joined the board',
    );
  }

  /**
   * The lease is gone: nothing more is claimed, and the fence keeper is told "now", so this
   * host's runs end whether or not the dispatcher can reach them.
   */
  private loseLease(why: string): void {
    this.lostWhy = why;
    this.claimUntil = 0;
    this.fence?.set(0, 0);
    writeLegacyFence(this.deps.config.dataDir, FENCE_NOW);
    this.deps.onLost(why);
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
    await this.sweeper.idle();
  }

  /**
   * The last thing a stopping daemon does here, after every spawn and ending it started: the
   * keeper goes on with the last deadline and the runs it guards.
   */
  closeFence(): void {
    this.fence?.close();
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
    if (this.renewing || this.lostWhy !== null || !this.host) return;
    const id = this.host.id;
    this.renewing = (async () => {
      try {
        const startedAt = this.deps.board.clock.boot();
        const renewed = await this.deps.board.renewHost(id, this.renewal(this.deps.board.shared));
        if (!renewed) {
          this.loseLease(
            `host ${id} lost its lease on the board (it ran out, or another host declared it dead)`,
          );
          return;
        }
        this.host = renewed;
        this.renewError = null;
        this.extended(startedAt, renewed);
        this.sweeper.start(id);
      } catch (err) {
        this.renewError = (err as Error).message;
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

  /** The lease was extended by a statement sent at `sentAt`: the fence moves with it. */
  private extended(sentAt: number, host: Host): void {
    if (!this.fence) return;
    const { config } = this.deps;
    const times = fenceTimes(
      sentAt,
      host.leaseExpiresAt - host.renewedAt,
      config.workers.killGraceSeconds * 1000,
      config.cluster.renewSeconds * 1000,
    );
    this.leaseEnd = times.leaseEnd;
    this.claimUntil = times.claimUntil;
    this.fence.set(times.termAt, times.killAt);
    writeLegacyFence(
      config.dataDir,
      legacyFenceLine(
        times.termAt,
        times.killAt,
        // Read by other processes on this machine's own clocks, whatever clock a test gives.
        systemClock.wall() - systemClock.boot(),
      ),
    );
  }
}
