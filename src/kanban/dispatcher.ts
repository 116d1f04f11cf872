// The dispatcher: ready tasks become supervised workers; exits, leases, runtimes and leftovers are handled.
import type { ChildProcess } from 'node:child_process';
import type { Config, Profile } from '../config/schema.js';
import {
  listProcesses,
  pidExists,
  statMatches,
  type ProcStat,
  type ProcessIdentity,
} from '../proc/index.js';
import { claimTask, type Claim } from './claims.js';
import { classifyExit } from './exit-classifier.js';
import type { Kanban } from './kanban.js';
import { readLogTail } from './run-log.js';
import {
  runDir,
  readExitRecord,
  readVerdict,
  readProcRecord,
  decodeStatus,
  type ExitRecord,
} from './run-files.js';
import { settleRun } from './run-settlement.js';
import type { RunRecord } from './run-store.js';
import { groupTerminator, type RunTerminator, type TerminationOp } from './run-termination.js';
import { ResourceSampler, type GroupSample } from './resource-sampler.js';
import { RunReaper } from './run-reaper.js';
import { ensureRunsDir, spawnWorker } from './worker-spawn.js';

export interface DispatcherLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DispatcherDeps {
  config: Config;
  kanban: Kanban;
  log: DispatcherLog;
  /** Told each tick's duration in ms (metrics). */
  observeTick?: (ms: number) => void;
  /** Cleans up a finished run's leftovers; defaults to process-group termination. */
  reaper?: RunTerminator;
}

interface LiveWorker {
  runId: string;
  taskId: string;
  profile: string;
  leader: ProcessIdentity;
  /** Our own child (its exit event ends the run), or null for a worker adopted after a restart. */
  child: ChildProcess | null;
  startedAt: number;
  sample: GroupSample | null;
}

/** Events after which there may be something new to dispatch. */
const WAKE_KINDS = new Set([
  'created',
  'promoted',
  'unblocked',
  'reclaimed',
  'rate_limited',
  'crashed',
  'stale',
  'timed_out',
  'spawn_failed',
  'edited',
]);

export class Dispatcher {
  private readonly live = new Map<string, LiveWorker>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private wakePending = false;
  private ticking = false;
  private stopping = false;
  private readonly reaper: RunReaper;
  private readonly sampler = new ResourceSampler();
  private baseUrl = '';
  /** Durations of recent ticks in ms, newest last (for metrics and benchmarks). */
  readonly tickDurations: number[] = [];
  /** Ticks completed so far. */
  ticks = 0;

  constructor(private readonly deps: DispatcherDeps) {
    const w = deps.config.workers;
    const grace = w.killGraceSeconds * 1000;
    const terminator = deps.reaper ?? groupTerminator({ graceMs: grace, killWaitMs: 5000 });
    this.reaper = new RunReaper(deps.kanban.board, terminator, grace);
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
   * Adopts or classifies every running task, then dispatches and starts the tick. `baseUrl` is
   * what workers get as GATEHOUSE_URL (known once the server listens).
   */
  start(baseUrl: string): void {
    this.baseUrl = baseUrl;
    ensureRunsDir(this.deps.config.dataDir);
    this.adoptAll();
    this.unsubscribe = this.board.bus.subscribe((event) => {
      if (WAKE_KINDS.has(event.kind)) this.wake();
    });
    this.timer = setInterval(() => void this.tick(), this.workers.tickSeconds * 1000);
    this.timer.unref();
    this.wake();
  }

  /** Stops spawning and supervising; running workers go on and the next instance adopts them. */
  stop(): void {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    for (const w of this.live.values()) w.child?.removeAllListeners('exit');
  }

  /** The live worker of a task: its group leader's pid and the last resource sample. */
  workerInfo(
    taskId: string,
  ): { pid: number; cpuPercent: number | null; rssBytes: number | null } | null {
    for (const w of this.live.values()) {
      if (w.taskId === taskId)
        return {
          pid: w.leader.pid,
          cpuPercent: w.sample?.cpuPercent ?? null,
          rssBytes: w.sample?.rssBytes ?? null,
        };
    }
    return null;
  }

  liveByProfile(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const w of this.live.values()) counts[w.profile] = (counts[w.profile] ?? 0) + 1;
    return counts;
  }

  liveCount(profile?: string): number {
    if (profile === undefined) return this.live.size;
    return [...this.live.values()].filter((w) => w.profile === profile).length;
  }

  /** Coalesces wake-ups into one dispatch pass on the next turn of the event loop. */
  wake(): void {
    if (this.wakePending || this.stopping) return;
    this.wakePending = true;
    setImmediate(() => {
      this.wakePending = false;
      this.guard('dispatch', () => this.dispatch());
    });
  }

  /**
   * Runs a step whose failure (a full disk, a closed database) must not escape into the event
   * loop: it is logged, and the tick retries what is left to do.
   */
  private guard(what: string, step: () => unknown): void {
    const report = (err: unknown) => this.deps.log.error({ err }, `dispatcher: ${what} failed`);
    try {
      const result = step();
      if (result instanceof Promise) result.catch(report);
    } catch (err) {
      report(err);
    }
  }

  dispatch(): void {
    if (this.stopping) return;
    let free = this.workers.maxConcurrent - this.live.size;
    if (free <= 0) return;
    for (const task of this.board.tasks.dispatchable(this.board.clock(), free + 100)) {
      if (free <= 0) break;
      const name = task.assignee ?? this.workers.defaultProfile;
      const profile = this.workers.profiles[name];
      if (!profile) {
        this.giveUpUnknownProfile(task.id, name);
        continue;
      }
      if (profile.maxConcurrent !== null && this.liveCount(name) >= profile.maxConcurrent) continue;
      const claim = claimTask(this.board, {
        taskId: task.id,
        profile: name,
        leaseMs: this.workers.claimTtlSeconds * 1000,
        keepDescendants: profile.keepDescendants,
        logPathFor: (runId) => `${runDir(this.deps.config.dataDir, runId)}/log`,
      });
      if (!claim) continue;
      free--;
      this.launch(claim, profile);
    }
  }

  private launch(claim: Claim, profile: Profile): void {
    let spawned: ReturnType<typeof spawnWorker>;
    try {
      spawned = spawnWorker({
        claim,
        profile,
        dataDir: this.deps.config.dataDir,
        baseUrl: this.baseUrl,
        inheritedEnv: this.deps.config.workerEnv,
      });
    } catch (err) {
      // The run folder could not be written (ENOSPC, EACCES): nothing was started.
      spawned = { ok: false, error: `cannot prepare the run folder: ${(err as Error).message}` };
    }
    if (!spawned.ok) {
      this.settle(claim.run.id, claim.task.id, {
        outcome: 'spawn_failed',
        exitCode: null,
        signal: null,
        error: spawned.error,
      });
      return;
    }
    const { child, proc } = spawned;
    this.board.transact((emit) => {
      this.board.runs.recordProcess(claim.run.id, proc);
      emit({
        taskId: claim.task.id,
        runId: claim.run.id,
        kind: 'spawned',
        payload: { pid: proc.pid, profile: profile.name },
      });
    });
    const worker: LiveWorker = {
      runId: claim.run.id,
      taskId: claim.task.id,
      profile: profile.name,
      leader: { pid: proc.pid, startTime: proc.startTime, bootId: proc.bootId },
      child,
      startedAt: claim.run.startedAt,
      sample: null,
    };
    this.live.set(worker.runId, worker);
    child.once('exit', (code, signal) => {
      const fallback: ExitRecord = code !== null ? decodeStatus(code) : { exitCode: null, signal };
      this.guard('finish', () => this.finish(worker, fallback));
    });
    child.unref();
    this.deps.log.info(
      { taskId: worker.taskId, runId: worker.runId, workerPid: proc.pid },
      'worker spawned',
    );
  }

  /** A worker's process ended: classify it from exit.json / result.json and settle its run. */
  private async finish(worker: LiveWorker, fallback: ExitRecord | null): Promise<void> {
    if (this.stopping || this.live.get(worker.runId) !== worker) return;
    this.live.delete(worker.runId);
    const dir = runDir(this.deps.config.dataDir, worker.runId);
    const exit = readExitRecord(dir) ?? fallback;
    const run = this.board.runs.get(worker.runId);
    const tail =
      exit && exit.exitCode !== 0 && run ? await readLogTail(run.logPath, 20).catch(() => '') : '';
    if (this.stopping) return;
    const c = classifyExit(exit, readVerdict(dir), tail, worker.leader.pid);
    this.settle(worker.runId, worker.taskId, c);
    if (run) await this.reap(run.id);
    this.wake();
  }

  private settle(runId: string, taskId: string, c: ReturnType<typeof classifyExit>): void {
    const task = this.board.transact((emit, now) =>
      settleRun(this.board, this.deps.kanban.policy, { taskId, runId, ...c }, emit, now),
    );
    if (task)
      this.deps.log.info({ taskId, runId, outcome: c.outcome, status: task.status }, 'run ended');
  }

  /** Ends whatever is left of a finished run's process group (unless the profile keeps it). */
  private async reap(runId: string): Promise<void> {
    if (!this.stopping) await this.reaper.reap(runId);
  }

  /** Terminates a running task's worker for a timeout or a stale lease (winner only). */
  private async terminate(taskId: string, op: TerminationOp, error: string): Promise<void> {
    const terminations = this.deps.kanban.terminations;
    const run = terminations.begin(taskId, op);
    if (!run) return;
    await this.finishTermination(run, op, error);
  }

  private async finishTermination(
    run: RunRecord,
    op: TerminationOp,
    error?: string,
  ): Promise<void> {
    if (this.deps.kanban.terminations.isActive(run.taskId)) return;
    try {
      const outcome = await this.deps.kanban.terminations.finish(run, op, error);
      if (this.stopping) return;
      this.deps.log.warn(
        { taskId: run.taskId, runId: run.id, op, ...outcome.report },
        outcome.deferred ? 'worker survived termination; claim kept' : 'worker terminated',
      );
    } catch (err) {
      // The claim on `terminating` stays; the next tick resumes the termination.
      this.deps.log.error({ err, taskId: run.taskId }, 'termination failed');
    }
  }

  private giveUpUnknownProfile(taskId: string, name: string): void {
    this.board.transact((emit, now) => {
      const reason = `no worker profile named "${name}"`;
      if (
        this.board.tasks.cas(
          taskId,
          { status: 'ready' },
          { status: 'blocked', block_reason: reason, updated_at: now },
        )
      ) {
        emit({ taskId, runId: null, kind: 'gave_up', payload: { reason } });
      }
    });
  }

  /** At start: every running task is adopted (its worker lives) or classified (it ended unwatched). */
  private adoptAll(): void {
    for (const task of this.board.tasks.running()) {
      const run = task.currentRunId === null ? null : this.board.runs.get(task.currentRunId);
      if (!run) continue;
      const dir = runDir(this.deps.config.dataDir, run.id);
      const proc =
        run.pid !== null && run.startTime !== null && run.bootId !== null
          ? {
              pid: run.pid,
              pgid: run.pgid ?? run.pid,
              startTime: run.startTime,
              bootId: run.bootId,
            }
          : readProcRecord(dir);
      if (proc && run.pid === null) this.board.runs.recordProcess(run.id, proc);
      // A termination the previous instance began is resumed by the tick, like any unfinished one.
      if (task.terminating) continue;
      const leader = proc
        ? { pid: proc.pid, startTime: proc.startTime, bootId: proc.bootId }
        : null;
      const worker: LiveWorker = {
        runId: run.id,
        taskId: task.id,
        profile: run.profile,
        leader: leader ?? { pid: 0, startTime: 0, bootId: '' },
        child: null,
        startedAt: run.startedAt,
        sample: null,
      };
      this.live.set(run.id, worker);
      if (leader && pidExists(leader.pid, leader)) {
        this.board.transact((emit) =>
          emit({ taskId: task.id, runId: run.id, kind: 'adopted', payload: { pid: leader.pid } }),
        );
        this.deps.log.info(
          { taskId: task.id, runId: run.id, workerPid: leader.pid },
          'worker adopted',
        );
      } else {
        this.guard('finish', () => this.finish(worker, null));
      }
    }
  }

  /** The safety net: adopted workers' liveness, runtimes, leases, leftovers, samples, dispatch. */
  async tick(): Promise<void> {
    if (this.ticking || this.stopping) return;
    this.ticking = true;
    const started = performance.now();
    try {
      // One snapshot of the process table serves liveness and sampling for every worker.
      const snapshot = this.live.size > 0 ? listProcesses() : [];
      const byPid = new Map(snapshot.map((p) => [p.pid, p]));
      for (const w of [...this.live.values()]) {
        if (w.child === null && !statMatches(byPid.get(w.leader.pid), w.leader))
          this.guard('finish', () => this.finish(w, null));
      }
      this.enforceDeadlines();
      for (const run of this.board.runs.unreaped()) this.guard('reap', () => this.reap(run.id));
      this.sample(snapshot);
      this.dispatch();
    } catch (err) {
      this.deps.log.error({ err }, 'dispatcher tick failed');
    } finally {
      this.ticking = false;
      const ms = performance.now() - started;
      this.ticks++;
      this.tickDurations.push(ms);
      this.deps.observeTick?.(ms);
      if (this.tickDurations.length > 100) this.tickDurations.shift();
    }
  }

  private enforceDeadlines(): void {
    const now = this.board.clock();
    for (const task of this.board.tasks.running()) {
      if (task.currentRunId === null) continue;
      if (task.terminating !== null) {
        // Begun but not settled (the settle failed, or a previous instance died mid-way): resume.
        const run = this.deps.kanban.terminations.isActive(task.id)
          ? null
          : this.board.runs.get(task.currentRunId);
        if (run)
          this.guard('finishTermination', () =>
            this.finishTermination(run, task.terminating as TerminationOp),
          );
        continue;
      }
      const worker = this.live.get(task.currentRunId);
      const profile = this.workers.profiles[worker?.profile ?? ''];
      const maxSeconds = task.maxRuntimeSeconds ?? profile?.maxRuntimeSeconds ?? null;
      if (worker && maxSeconds !== null && now - worker.startedAt > maxSeconds * 1000) {
        this.guard('terminate', () =>
          this.terminate(task.id, 'timeout', `exceeded its max runtime of ${maxSeconds}s`),
        );
        continue;
      }
      if (task.leaseExpiresAt === null || task.leaseExpiresAt > now) continue;
      const fresh =
        task.lastHeartbeatAt === null ||
        now - task.lastHeartbeatAt <= this.workers.heartbeatMaxStaleSeconds * 1000;
      if (worker && fresh) this.extendLease(task.id, task.currentRunId, now);
      else
        this.guard('terminate', () =>
          this.terminate(
            task.id,
            'stale',
            worker ? 'lease expired with a stale heartbeat' : 'lease expired with no live worker',
          ),
        );
    }
  }

  private extendLease(taskId: string, runId: string, now: number): void {
    const until = now + this.workers.claimTtlSeconds * 1000;
    this.board.transact((emit) => {
      if (
        this.board.tasks.cas(
          taskId,
          { status: 'running', runId, terminating: null },
          { lease_expires_at: until },
        )
      ) {
        emit({ taskId, runId, kind: 'claim_extended', payload: { until } });
      }
    });
  }

  private sample(snapshot: readonly ProcStat[]): void {
    const workers = [...this.live.values()].filter((w) => w.leader.pid > 0);
    if (workers.length === 0) return;
    const pgids = workers.map((w) => w.leader.pid);
    const samples = this.sampler.sample(snapshot, pgids, this.board.clock());
    for (const w of workers) {
      const s = samples.get(w.leader.pid);
      if (!s) continue;
      w.sample = s;
      this.board.runs.recordSample(w.runId, s.cpuPercent, s.rssBytes);
    }
  }
}
