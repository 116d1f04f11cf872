// Terminating a running task's worker, by the one caller that won the right to, then settling the task.
import { AppError } from '../errors.js';
import { terminateGroup, type TerminateResult } from '../proc/index.js';
import type { Board } from './board.js';
import type { RunRecord } from './run-store.js';
import { settleRun, type SettlementPolicy } from './run-settlement.js';
import type { RunOutcome, Task } from './types.js';

/** Why a worker is being terminated; stored in tasks.terminating while it happens. */
export type TerminationOp = 'archive' | 'reclaim' | 'reclaim_force' | 'timeout' | 'stale';

export type RunTerminator = (run: RunRecord) => Promise<TerminateResult>;

const NOTHING_TO_END: TerminateResult = {
  terminated: true,
  sigkill: false,
  survived: false,
  ended: [],
};

/** The environment entry every process of a run carries: proof it is ours once its leader is gone. */
export function runMarker(runId: string): string {
  return `GATEHOUSE_RUN_ID=${runId}`;
}

/** Terminates a run's whole process group, identity-checked (SPEC §6 "Termination"). */
export function groupTerminator(opts: { graceMs: number; killWaitMs: number }): RunTerminator {
  return (run) => {
    if (run.pid === null || run.startTime === null || run.bootId === null)
      return Promise.resolve(NOTHING_TO_END);
    const leader = { pid: run.pid, startTime: run.startTime, bootId: run.bootId };
    return terminateGroup(leader, runMarker(run.id), opts);
  };
}

const OUTCOME: Record<TerminationOp, RunOutcome> = {
  archive: 'archived',
  reclaim: 'reclaimed',
  reclaim_force: 'reclaimed',
  timeout: 'timed_out',
  stale: 'stale',
};

export interface TerminationOutcome {
  task: Task;
  report: TerminateResult & { prevPid: number | null };
  /** The worker survived and the task kept its claim (reclaim_deferred). */
  deferred: boolean;
}

export class Terminations {
  /** Tasks whose termination this process is carrying out right now. */
  private readonly active = new Set<string>();

  constructor(
    private readonly board: Board,
    private readonly policy: SettlementPolicy & { reclaimDeferMs: number },
    private readonly terminator: RunTerminator,
  ) {}

  /**
   * Claims the right to terminate the task's current run (compare-and-set on `terminating`).
   * Returns the run, or null when the task is not running or someone else is terminating it.
   */
  begin(taskId: string, op: TerminationOp): RunRecord | null {
    return this.board.transact((_emit, now) => {
      const task = this.board.tasks.get(taskId);
      if (!task || task.status !== 'running' || task.currentRunId === null) return null;
      const won = this.board.tasks.cas(
        taskId,
        { status: 'running', runId: task.currentRunId, terminating: null },
        { terminating: op, updated_at: now },
      );
      return won ? this.board.runs.get(task.currentRunId) : null;
    });
  }

  /** Terminates and settles a run this caller claimed with begin() (or found claimed after a restart). */
  isActive(taskId: string): boolean {
    return this.active.has(taskId);
  }

  async finish(run: RunRecord, op: TerminationOp, error?: string): Promise<TerminationOutcome> {
    if (this.active.has(run.taskId)) {
      throw new AppError(
        'INVALID_TRANSITION',
        `the worker of task ${run.taskId} is already being terminated`,
      );
    }
    this.active.add(run.taskId);
    try {
      return await this.terminateAndSettle(run, op, error);
    } finally {
      this.active.delete(run.taskId);
    }
  }

  private async terminateAndSettle(
    run: RunRecord,
    op: TerminationOp,
    error?: string,
  ): Promise<TerminationOutcome> {
    const result = await this.terminator(run);
    const report = { prevPid: run.pid, ...result };
    const defer = result.survived && op !== 'archive' && op !== 'reclaim_force';
    const settled = this.board.transact((emit, now) => {
      if (defer) {
        const kept = this.board.tasks.cas(
          run.taskId,
          { status: 'running', runId: run.id, terminating: op },
          {
            terminating: null,
            lease_expires_at: now + this.policy.reclaimDeferMs,
            updated_at: now,
          },
        );
        if (kept)
          emit({
            taskId: run.taskId,
            runId: run.id,
            kind: 'reclaim_deferred',
            payload: { op, ...report },
          });
        return this.board.tasks.get(run.taskId);
      }
      return settleRun(
        this.board,
        this.policy,
        {
          taskId: run.taskId,
          runId: run.id,
          outcome: OUTCOME[op],
          terminating: op,
          error: error ?? null,
          payload: { ...report, ...(op === 'reclaim_force' ? { forced: true } : {}) },
          procGone: result.terminated,
        },
        emit,
        now,
      );
    });
    if (!settled)
      throw new AppError(
        'INVALID_TRANSITION',
        `task ${run.taskId} changed while its worker was being terminated`,
      );
    return { task: settled, report, deferred: defer };
  }
}
