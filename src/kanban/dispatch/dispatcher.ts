// The dispatch loop: ready tasks become supervised workers, one spawn per turn of the event
// loop, with a tick as the safety net and the clock for adopted workers, deadlines, leftovers
// and samples.
import type { Config } from '../../config/schema.js';
import { pidExists, startTimeNow } from '../../proc/index.js';
import { RepeatLimiter } from '../../repeat-limit.js';
import type { Kanban } from '../kanban.js';
import { WAKE_KINDS } from '../model/events.js';
import { giveUpReady } from '../moves/give-up.js';
import { adoptRunning } from './adoption.js';
import { Deadlines } from './deadlines.js';
import { AgentWatch } from './agent-watch.js';
import { BudgetWatch } from './budget-watch.js';
import { ProfileHolds } from './profile-holds.js';
import { LiveWorkers, type LiveWorker } from './live-workers.js';
import type { DispatcherLog } from './log.js';
import { RunEndings } from './run-endings.js';
import { RunReaper } from './run-reaper.js';
import type { RunTerminator } from './run-terminator.js';
import { ensureRunsDir } from './worker-spawn.js';
import { HostLease } from '../hosts/host-lease.js';
import { rejoinBoard } from '../hosts/rejoin.js';
import { RunCgroups } from './run-cgroups.js';
import { Launcher } from './launch.js';
import { ClaimPass } from './claim-pass.js';
import { WorkerSamples } from './worker-samples.js';
import { VERSION } from '../../version.js';

export interface DispatcherDeps {
  config: Config;
  kanban: Kanban;
  log: DispatcherLog;
  /** Told each tick's duration in ms (metrics). */
  observeTick?: (ms: number) => void;
}

export class Dispatcher {
  private readonly live: LiveWorkers;
  /** Each run's cgroup on a shared board, where cgroups can be made (run-cgroups.ts). */
  private readonly cgroups: RunCgroups | null;
  private readonly endings: RunEndings;
  private readonly launcher: Launcher;
  private readonly reaper: RunReaper;
  private readonly deadlines: Deadlines;
  private readonly samples: WorkerSamples;
  private readonly agents: AgentWatch;
  /** Profiles a rate limit holds, as dispatch reads them. */
  readonly holds: ProfileHolds;
  private readonly claims: ClaimPass;
  /** This daemon as a host of the board. */
  readonly host: HostLease;
  /** Work started and not yet finished; stop() waits for it before the database closes. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** A failure every tick (a full disk) is logged once a minute, not once a tick. */
  private readonly failures = new RepeatLimiter();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private wakePending = false;
  /** A dispatch pass is under way; a wake-up meanwhile asks for another after it. */
  private dispatching = false;
  private dispatchAgain = false;
  private ticking = false;
  private stopping = false;
  /** The lease was lost: its runs are being ended and the host joins again (rejoin.ts). */
  private rejoining: Promise<void> | null = null;
  private baseUrl = '';
  /** Durations of recent ticks in ms, newest last (for metrics and benchmarks). */
  readonly tickDurations: number[] = [];
  /** Ticks completed so far. */
  ticks = 0;

  constructor(private readonly deps: DispatcherDeps) {
    const { kanban, config } = deps;
    const terminator: RunTerminator = kanban.terminator;
    // Every run this host supervises is ended at its fence unless it ends first.
    this.cgroups =
      kanban.board.shared || limitedProfiles(config).length > 0
        ? new RunCgroups(config.dataDir)
        : null;
    this.live = new LiveWorkers({
      added: (w) => this.host.guard(w.runId, w.leader, w.cgroup),
      removed: (w) => {
        this.host.release(w.runId);
        this.cgroups?.release(w.cgroup, w.keepDescendants);
      },
    });
    this.host = new HostLease({
      board: kanban.board,
      ownership: kanban.ownership,
      config,
      policy: kanban.policy,
      version: VERSION,
      log: deps.log,
      running: () => this.live.size,
      onLost: (why) => {
        deps.log.error({}, `${why}: ending its runs, then joining the board again as a new host`);
        this.rejoin();
      },
      // Only once started: before that (adoption under way) nothing may be claimed, and the end
      // of start() dispatches anyway.
      onGuarding: () => {
        if (this.running) this.wake();
      },
    });

    this.reaper = new RunReaper(
      kanban.board,
      terminator,
      config.workers.killGraceSeconds * 1000,
      config.dataDir,
    );
    this.launcher = new Launcher({
      board: kanban.board,
      policy: kanban.policy,
      config,
      log: deps.log,
      live: this.live,
      cgroups: this.cgroups,
      workspaces: kanban.workspaces,
      launching: kanban.launching,
      baseUrl: () => this.baseUrl,
      onExit: (worker) => this.endRun(worker),
      admit: (runId, cgroup) => (this.rejoining === null ? this.host.admit(runId, cgroup) : null),
      withdraw: (runId) => this.host.release(runId),
      runTokens: kanban.runTokens,
    });
    this.endings = new RunEndings({
      board: kanban.board,
      policy: kanban.policy,
      terminator,
      reaper: this.reaper,
      live: this.live,
      dataDir: config.dataDir,
      reclaimDeferMs: config.workers.reclaimDeferSeconds * 1000,
      judge: (run) => kanban.workspaces.judge(run),
      wake: () => this.wake(),
      agentReading: (runId) => this.agents.finalReading(runId),
      agentOf: (profile) => config.workers.profiles[profile]?.agent ?? null,
    });
    this.holds = new ProfileHolds(kanban.board);
    this.samples = new WorkerSamples(kanban.board, this.live, () => this.stopping);
    const budgets = new BudgetWatch({
      board: kanban.board,
      workers: config.workers,
      stop: (w, reason) => this.deadlines.terminate(w.taskId, w.runId, 'budget', reason),
      track: (what, work) => this.track(what, work),
    });
    this.agents = new AgentWatch({
      live: this.live,
      workers: config.workers,
      dataDir: config.dataDir,
      clock: kanban.board.clock,
      timeOut: (w, reason) => this.deadlines.terminate(w.taskId, w.runId, 'timeout', reason),
      settle: (w, verdict) => this.endings.settlePrinted(w, verdict),
      track: (what, work) => this.track(what, work),
      readings: (readings) => budgets.check(readings),
    });
    this.claims = new ClaimPass({
      board: kanban.board,
      config,
      live: this.live,
      host: this.host,
      launcher: this.launcher,
      workspaces: kanban.workspaces,
      halted: () => this.stopping || this.rejoining !== null,
      track: (what, work) => this.track(what, work),
      holds: this.holds,
    });
    this.deadlines = new Deadlines({
      board: kanban.board,
      live: this.live,
      terminations: kanban.terminations,
      workers: config.workers,
      log: deps.log,
      owner: kanban.ownership,
      track: (what, work) => this.track(what, work),
    });
  }

  private get board() {
    return this.deps.kanban.board;
  }

  private get workers() {
    return this.deps.config.workers;
  }

  get running(): boolean {
    return this.timer !== null;
  }

  /**
   * Adopts or settles every running task, then dispatches and starts the tick. `baseUrl` is
   * what workers get as GATEHOUSE_URL (known once the server listens).
   */
  /**
   * Profiles whose limits cannot be enforced on this host (no cgroup v2 of gatehouse's own):
   * said in /ready and at start, never silently off (docs/sandbox.md).
   */
  unenforcedLimits(): string[] {
    const controllers = this.cgroups?.base ? this.cgroups.controllers : new Set<string>();
    const needs = { memoryMax: 'memory', pidsMax: 'pids', cpuWeight: 'cpu' } as const;
    return Object.values(this.deps.config.workers.profiles)
      .filter((p) =>
        (Object.keys(needs) as (keyof typeof needs)[]).some(
          (limit) => p.sandbox.limits[limit] !== null && !controllers.has(needs[limit]),
        ),
      )
      .map((p) => p.name);
  }

  /** The URL workers (and links to the dashboard) reach this daemon at, once started; else null. */
  get url(): string | null {
    return this.baseUrl || null;
  }

  async start(baseUrl: string): Promise<void> {
    this.baseUrl = baseUrl;
    ensureRunsDir(this.deps.config.dataDir);
    await this.host.start();
    await this.cgroups?.sweepEarlier();
    await this.adopt();
    this.host.adopted();
    this.host.keepRenewing();
    this.unsubscribe = this.board.bus.subscribe((event) => {
      // News of a run whose leader has exited (a termination settling it, which its ending
      // waited for): finish the ending now, freeing its slot, not at the next tick.
      const exited = event.runId === null ? undefined : this.live.get(event.runId);
      if (exited?.exit !== undefined) this.endRun(exited);
      if (event.kind === 'profile_held' || event.kind === 'profile_released') this.holds.forget();
      if (WAKE_KINDS.has(event.kind)) this.wake();
      const archived = event.kind === 'archived' ? event.taskId : null;
      if (archived) this.track('workspace', () => this.deps.kanban.workspaces.retire(archived));
    });
    this.timer = setInterval(
      () => this.track('tick', () => this.tick()),
      this.workers.tickSeconds * 1000,
    );
    this.timer.unref();
    this.wake();
  }

  /**
   * Ends this host's runs and joins the board again (rejoin.ts), then adopts what is left of
   * them and dispatches; a lease lost again meanwhile starts it over.
   */
  private rejoin(): void {
    if (this.rejoining) return;
    this.rejoining = (async () => {
      do {
        await rejoinBoard({
          host: this.host,
          live: this.live,
          settleInFlight: () => this.settleInFlight(5000),
          stopping: () => this.stopping,
          graceMs: this.workers.killGraceSeconds * 1000,
          log: this.deps.log,
        });
        if (!this.stopping && !this.host.lost) await this.adopt();
      } while (!this.stopping && this.host.lost);
    })()
      .catch((err: unknown) => this.deps.log.error({ err }, 'host: joining the board again failed'))
      .finally(() => {
        this.rejoining = null;
        this.wake();
      });
  }

  /** Adopts or settles every running task of this host (at start, and after joining again). */
  private async adopt(): Promise<void> {
    for (const ended of await adoptRunning(
      this.board,
      this.live,
      this.deps.config.dataDir,
      this.deps.log,
      this.deps.kanban.ownership,
      this.host,
      (runId) => this.cgroups?.of(runId) ?? null,
    ))
      this.endRun(ended);
  }

  /** Waits at most `waitMs` for the work already started (endings, terminations). */
  private async settleInFlight(waitMs: number): Promise<void> {
    const deadline = performance.now() + waitMs;
    while (this.inFlight.size > 0 && performance.now() < deadline) {
      const left = new Promise((resolve) =>
        setTimeout(resolve, deadline - performance.now()).unref(),
      );
      await Promise.race([Promise.allSettled([...this.inFlight]), left]);
    }
  }

  /**
   * Stops spawning and supervising, and waits (at most `waitMs`) for the work already started
   * (endings, terminations) so nothing writes to a closed database. Work still going after that
   * (a worker that takes its whole kill grace to die) is resumed by the next instance from
   * what the board recorded. Running workers go on and the next instance adopts them.
   */
  async stop(waitMs = 5000): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    for (const w of this.live.all()) w.child?.ignoreExit();
    await this.host.stop();
    await this.rejoining;
    await this.settleInFlight(waitMs);
    await this.cgroups?.released();
    // Last: every run spawned until now is guarded by the keeper, which goes on without us.
    this.host.closeFence();
  }

  /** The live worker of a task: its group leader's pid and the last resource sample. */
  workerInfo(
    taskId: string,
  ): { pid: number; cpuPercent: number | null; rssBytes: number | null } | null {
    const w = this.live.ofTask(taskId);
    if (!w?.leader || w.exit !== undefined) return null;
    return {
      pid: w.leader.pid,
      cpuPercent: w.sample?.cpuPercent ?? null,
      rssBytes: w.sample?.rssBytes ?? null,
    };
  }

  /**
   * Ends now what is left of this host's closed runs (a worker that reported its verdict, or an
   * agent its final line, and has not exited yet): a stop that leaves nothing behind.
   */
  async reapLingering(): Promise<void> {
    for (const run of await this.board.runs.unreaped()) {
      if (!this.deps.kanban.ownership.owns(run)) continue;
      await this.reaper.reap(run, this.live.get(run.id)?.groupHeldUntil ?? null, true);
    }
  }

  liveByProfile(): Record<string, number> {
    return this.live.countByProfile();
  }

  liveCount(): number {
    return this.live.size;
  }

  /**
   * Coalesces wake-ups into one dispatch pass on the next turn of the event loop, in its timers
   * phase: requests that arrive meanwhile are read in the poll phase after it and answered in
   * the check phase (a group commit), without waiting behind the next spawn.
   */
  wake(): void {
    if (this.wakePending || this.stopping) return;
    this.wakePending = true;
    setTimeout(() => {
      this.wakePending = false;
      this.track('dispatch', () => this.dispatch());
    }, 0);
  }

  /**
   * Runs a step whose failure (a full disk, a closed database) must not escape into the event
   * loop: it is logged, and the tick retries what is left to do. stop() awaits it.
   */
  private track(what: string, work: () => Promise<unknown>): void {
    if (this.stopping) return;
    const running = work()
      .catch((err: unknown) =>
        this.failures.report(
          (obj, msg) => this.deps.log.error(obj, msg),
          err,
          `dispatcher: ${what} failed`,
        ),
      )
      .finally(() => this.inFlight.delete(running));
    this.inFlight.add(running);
  }

  /**
   * Claims the best ready task of the next profile, in turn, with a free slot within the global
   * cap, and asks for another pass: one claim per turn of the event loop, its worker started in
   * the background (its folder written and the spawn made off the loop), so that requests
   * arriving during a burst are served between claims.
   */
  private async dispatch(): Promise<void> {
    if (this.dispatching) {
      this.dispatchAgain = true;
      return;
    }
    this.dispatching = true;
    try {
      await this.dispatchOne();
    } finally {
      this.dispatching = false;
      if (this.dispatchAgain) {
        this.dispatchAgain = false;
        this.wake();
      }
    }
  }

  /** One pass: at most one claim (claim-pass.ts); a claim asks for another pass. */
  private async dispatchOne(): Promise<void> {
    if (await this.claims.once()) this.wake();
  }

  private endRun(worker: LiveWorker): void {
    this.track('run ending', () => this.endings.end(worker));
  }

  /** The safety net: adopted workers' liveness, unfinished endings, deadlines, leftovers; then samples. */
  async tick(): Promise<void> {
    // While the host joins again, nothing of its old runs is supervised: they are being ended.
    if (this.ticking || this.stopping || this.rejoining) return;
    this.ticking = true;
    const started = performance.now();
    try {
      // Adopted leaders (no exit event will come for them) are checked by their own stat only.
      const seenAt = startTimeNow();
      for (const w of this.live.all()) {
        if (w.exit === undefined && w.child === null) {
          if (w.leader && pidExists(w.leader.pid, w.leader)) w.groupHeldUntil = seenAt;
          else w.exit = null;
        }
        if (w.exit !== undefined) this.endRun(w);
      }
      await this.deadlines.check();
      this.agents.check();
      // Closed runs with something left: not yet handled by an ending, or a worker that gave its
      // verdict and has not exited (it gets killGraceSeconds to, then it is ended).
      for (const run of await this.board.runs.unreaped()) {
        if (!this.deps.kanban.ownership.owns(run)) continue;
        const w = this.live.get(run.id);
        if (!w || w.exit === undefined)
          this.track('reap', () => this.reaper.reap(run, w?.groupHeldUntil ?? null));
      }
      await this.giveUpStranded();
      await this.cgroups?.sweep();
      await this.dispatch();
    } finally {
      this.ticking = false;
      const ms = performance.now() - started;
      this.ticks++;
      this.tickDurations.push(ms);
      this.deps.observeTick?.(ms);
      if (this.tickDurations.length > 100) this.tickDurations.shift();
    }
    this.samples.start((what, work) => this.track(what, work));
  }

  /**
   * Ready tasks assigned to a profile this daemon does not run can never run: blocked, said why.
   * On a shared board they wait instead: the one host that runs it may be restarting, or join.
   */
  private async giveUpStranded(): Promise<void> {
    if (this.board.shared) return;
    const profiles = Object.keys(this.workers.profiles);
    for (const { id, assignee } of await this.board.tasks.stranded(profiles)) {
      await this.board.transact((tx) =>
        giveUpReady(tx, id, `no worker profile named "${assignee}"`),
      );
    }
  }
}

/** The profiles that set sandbox.limits. */
function limitedProfiles(config: Config): string[] {
  return Object.values(config.workers.profiles)
    .filter((p) => Object.values(p.sandbox.limits).some((v) => v !== null))
    .map((p) => p.name);
}
