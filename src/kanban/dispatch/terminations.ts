// Terminating a running task's worker for archive, reclaim, timeout, stale or interrupt: by the
// one caller that won the right to, and the task is settled only once nothing of the run lives.
import { AppError } from '../../errors.js';
import type { Board } from '../board.js';
import type { Task } from '../model/types.js';
import { settleRun, type SettlementPolicy } from '../moves/settle.js';
import {
  beginTermination,
  deferTermination,
  TERMINATION_OUTCOME,
  type TerminationOp,
} from '../moves/termination.js';
import type { RunAgent } from '../../agents/types.js';
import type { RunRecord } from '../store/records/run.js';
import { readExitRecord, runDir } from './run-files.js';
import type { RunTerminator } from './run-terminator.js';

export interface TerminationOutcome {
  task: Task;
  report: { prevPid: number | null; terminated: boolean; sigkill: boolean; survived: boolean };
  /** Something survived and the task kept its claim (reclaim_deferred); retried each tick. */
  deferred: boolean;
}

export class Terminations {
  /** Tasks whose termination this process is carrying out right now, each until it ends. */
  private readonly active = new Map<string, Promise<unknown>>();
  /** Deferrals already announced, so a stuck worker writes one reclaim_deferred, not one a tick. */
  private readonly announced = new Set<string>();

  constructor(
    private readonly board: Board,
    private readonly policy: SettlementPolicy & { reclaimDeferMs: number },
    private readonly terminator: RunTerminator,
    private readonly dataDir: string,
    /** An agent run's session and usage as far as it printed them (its budget), or null. */
    private readonly agentOf: (run: RunRecord) => RunAgent | null = () => null,
  ) {}

  isActive(taskId: string): boolean {
    return this.active.has(taskId);
  }

  /** Resolves once the task's termination in progress (if any) has ended, however it ended. */
  async ended(taskId: string): Promise<void> {
    await this.active.get(taskId)?.catch(() => undefined);
  }

  /**
   * Claims the right to terminate the task's current run (that is `runId`, when given). Returns
   * the run, or null when the task is not running it or another termination holds it.
   */
  begin(taskId: string, op: TerminationOp, runId?: string): Promise<RunRecord | null> {
    return this.board.transact((tx) =>
      beginTermination(tx, taskId, op, !this.active.has(taskId), runId),
    );
  }

  /** Terminates and settles a run claimed with begin() (or found claimed after a restart). */
  async finish(run: RunRecord, op: TerminationOp, error?: string): Promise<TerminationOutcome> {
    if (this.active.has(run.taskId)) {
      throw new AppError(
        'INVALID_TRANSITION',
        `the worker of task ${run.taskId} is already being terminated`,
      );
    }
    const ending = this.terminateAndSettle(run, op, error);
    this.active.set(run.taskId, ending);
    try {
      return await ending;
    } finally {
      this.active.delete(run.taskId);
    }
  }

  private async terminateAndSettle(
    run: RunRecord,
    op: TerminationOp,
    error?: string,
  ): Promise<TerminationOutcome> {
    const result = await this.terminator(run, null);
    const report = {
      prevPid: run.pid,
      terminated: result.terminated,
      sigkill: result.sigkill,
      survived: result.survived,
    };
    // Only the operator's explicit force releases a task whose worker would not die.
    const defer = result.survived && op !== 'reclaim_force';
    const key = `${run.id}:${op}`;
    let kept = false;
    // Read once, before the transaction (a long output is not read under the board's lock).
    const agent = defer ? null : this.agentOf(run);
    const task = await this.board.transact(async (tx) => {
      if (defer) {
        kept = await deferTermination(
          tx,
          run,
          op,
          { ...report, pids: result.survivors },
          this.policy.reclaimDeferMs,
          !this.announced.has(key),
        );
        return kept ? tx.store.tasks.get(run.taskId) : null;
      }
      // The group is gone: the wrapper has recorded how the worker ended, unless it was killed.
      const exit = result.survived ? null : readExitRecord(runDir(this.dataDir, run.id));
      return settleRun(tx, this.policy, {
        taskId: run.taskId,
        runId: run.id,
        outcome: TERMINATION_OUTCOME[op],
        terminating: op,
        exitCode: exit?.exitCode ?? null,
        signal: exit?.signal ?? null,
        error: error ?? null,
        agent,
        payload: {
          ...report,
          ended: result.ended,
          ...(op === 'reclaim_force' ? { forced: true } : {}),
        },
        procGone: true,
      });
    });
    // Once committed: a move run again (its group retried, see the Transactor) announces again.
    if (kept) this.announced.add(key);
    if (!task)
      throw new AppError(
        'INVALID_TRANSITION',
        `task ${run.taskId} changed while its worker was being terminated`,
      );
    if (!defer) this.announced.delete(key);
    return { task, report, deferred: defer };
  }
}
