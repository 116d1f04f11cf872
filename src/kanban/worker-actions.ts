// Worker transitions (complete, block, heartbeat), authorised by the run's own token.
import { AppError } from '../errors.js';
import type { Board } from './board.js';
import { hashToken } from './ids.js';
import type { RunRecord } from './run-store.js';
import { settleRun, type SettlementPolicy } from './run-settlement.js';
import type { RunOutcome, Task } from './types.js';

export class WorkerActions {
  constructor(
    private readonly board: Board,
    private readonly policy: SettlementPolicy,
  ) {}

  /** The run `token` belongs to: 401 without one, 403 for another task's (or no) run. */
  authorize(taskId: string, token: string | null): RunRecord {
    if (!token)
      throw new AppError(
        'UNAUTHORIZED',
        'worker routes need Authorization: Bearer $GATEHOUSE_RUN_TOKEN',
      );
    this.board.get(taskId);
    const run = this.board.runs.byTokenHash(hashToken(token));
    if (!run || run.taskId !== taskId)
      throw new AppError('FORBIDDEN', `this token does not belong to a run of task ${taskId}`);
    return run;
  }

  complete(
    taskId: string,
    token: string | null,
    body: { summary?: string | undefined; result?: unknown },
  ): Task {
    return this.finish(taskId, token, 'completed', {
      summary: body.summary ?? null,
      result: body.result,
    });
  }

  block(taskId: string, token: string | null, reason: string): Task {
    return this.finish(taskId, token, 'blocked', { blockReason: reason });
  }

  heartbeat(taskId: string, token: string | null, note: string | undefined): Task {
    const run = this.authorize(taskId, token);
    return this.board.transact((emit, now) => {
      if (
        !this.board.tasks.cas(
          taskId,
          { status: 'running', runId: run.id },
          { last_heartbeat_at: now },
        )
      ) {
        throw this.stale(taskId, run);
      }
      emit({
        taskId,
        runId: run.id,
        kind: 'heartbeat',
        payload: note === undefined ? {} : { note },
      });
      return this.board.get(taskId);
    });
  }

  private finish(
    taskId: string,
    token: string | null,
    outcome: Extract<RunOutcome, 'completed' | 'blocked'>,
    fields: { summary?: string | null; result?: unknown; blockReason?: string },
  ): Task {
    const run = this.authorize(taskId, token);
    return this.board.transact((emit, now) => {
      const settled = settleRun(
        this.board,
        this.policy,
        { taskId, runId: run.id, outcome, ...fields },
        emit,
        now,
      );
      if (settled) return settled;
      // The same verdict repeated by the same run is answered as before, changing nothing.
      if (this.board.runs.get(run.id)?.outcome === outcome) return this.board.get(taskId);
      throw this.stale(taskId, run);
    });
  }

  private stale(taskId: string, run: RunRecord): AppError {
    const task = this.board.get(taskId);
    const why =
      task.currentRunId === run.id
        ? `its worker is being terminated`
        : `run ${run.id} is not its current run`;
    return new AppError('RUN_MISMATCH', `task ${taskId} is ${task.status}; ${why}`);
  }
}
