// The clock's part of supervision: max runtimes, leases, and terminations left unfinished.
import type { Config } from '../../config/schema.js';
import type { Board } from '../board.js';
import { extendLease } from '../moves/lease.js';
import { isTerminationOp, type TerminationOp } from '../moves/termination.js';
import type { RunRecord } from '../store/records/run.js';
import type { LiveWorkers } from './live-workers.js';
import type { DispatcherLog } from './log.js';
import type { Ownership } from '../hosts/ownership.js';
import type { Terminations } from './terminations.js';

export interface DeadlinesDeps {
  board: Board;
  live: LiveWorkers;
  terminations: Terminations;
  workers: Config['workers'];
  log: DispatcherLog;
  owner: Ownership;
  /** Runs async work whose failure is logged and retried by the next tick. */
  track: (what: string, work: () => Promise<unknown>) => void;
}

const overRuntime = (seconds: number) => `exceeded its max runtime of ${seconds}s`;

export class Deadlines {
  constructor(private readonly deps: DeadlinesDeps) {}

  async check(): Promise<void> {
    const { board, live, terminations, workers } = this.deps;
    const now = board.clock.wall();
    for (const task of await board.tasks.runningDeadlines()) {
      const runId = task.currentRunId;
      if (runId === null) continue;
      if (isTerminationOp(task.terminating)) {
        // Begun but not settled (the worker survived, a settle failed, or a previous instance
        // died mid-way): carry on until nothing of the run is alive, for the same reason.
        const run = terminations.isActive(task.id) ? null : await board.runs.get(runId);
        if (run && this.deps.owner.owns(run))
          this.finish(run, task.terminating, this.reasonOf(task.terminating, task, run.profile));
        continue;
      }
      const worker = live.get(runId);
      // Its leader exited: the run's ending is under way (RunEndings).
      if (worker?.exit !== undefined) continue;
      const profile = workers.profiles[worker?.profile ?? ''];
      const maxSeconds = task.maxRuntimeSeconds ?? profile?.maxRuntimeSeconds ?? null;
      if (worker && maxSeconds !== null && now - worker.startedAt > maxSeconds * 1000) {
        await this.terminate(task.id, runId, 'timeout', overRuntime(maxSeconds));
        continue;
      }
      if (task.leaseExpiresAt === null || task.leaseExpiresAt > now) continue;
      // Not among this host's workers: another host's run is left to it (or to the takeover).
      if (!worker) {
        const run = await board.runs.get(runId);
        if (!run || !this.deps.owner.owns(run)) continue;
      }
      const fresh =
        task.lastHeartbeatAt === null ||
        now - task.lastHeartbeatAt <= workers.heartbeatMaxStaleSeconds * 1000;
      if (worker && fresh) {
        const until = now + workers.claimTtlSeconds * 1000;
        await board.transact((tx) => extendLease(tx, task.id, runId, until));
      } else {
        const why = worker
          ? 'lease expired with a stale heartbeat'
          : 'lease expired with no live worker';
        await this.terminate(task.id, runId, 'stale', why);
      }
    }
  }

  /** Why the clock began a termination, told again when it is resumed. */
  private reasonOf(
    op: TerminationOp,
    task: { maxRuntimeSeconds: number | null },
    profile: string,
  ): string | undefined {
    if (op === 'stale') return 'lease expired';
    if (op === 'budget') return 'budget reached';
    if (op !== 'timeout') return undefined;
    const max =
      task.maxRuntimeSeconds ?? this.deps.workers.profiles[profile]?.maxRuntimeSeconds ?? null;
    return max === null ? 'exceeded its max runtime' : overRuntime(max);
  }

  /**
   * Terminates the worker of run `runId` of a task (only if it is still the task's run, and this
   * caller wins the right to).
   */
  async terminate(taskId: string, runId: string, op: TerminationOp, error?: string): Promise<void> {
    const run = await this.deps.terminations.begin(taskId, op, runId);
    if (run) this.finish(run, op, error);
  }

  private finish(run: RunRecord, op: TerminationOp, error?: string): void {
    const log = this.deps.log.child({ taskId: run.taskId, runId: run.id });
    this.deps.track('termination', async () => {
      const outcome = await this.deps.terminations.finish(run, op, error);
      log.warn(
        { op, ...outcome.report },
        outcome.deferred ? 'worker survived termination; claim kept' : 'worker terminated',
      );
    });
  }
}
