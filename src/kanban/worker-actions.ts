// Worker transitions (complete, block, heartbeat), authorised by the run's own token.
import { AppError, BEARER_CHALLENGE } from '../errors.js';
import { pidExists, startTimeNow } from '../proc/index.js';
import type { Board } from './board.js';
import { hashToken } from './model/ids.js';
import type { RunOutcome, Task } from './model/types.js';
import { heartbeat } from './moves/lease.js';
import { settleRun, type SettlementPolicy } from './moves/settle.js';
import type { Tx } from './moves/tx.js';
import { leaderOf, type RunRecord } from './store/records/run.js';
import type { RunJudgement } from './dispatch/task-workspaces.js';

/** At most one heartbeat event per run per this long (docs/workers.md); the lease counts every one. */
export const HEARTBEAT_EVENT_MS = 30_000;

export class WorkerActions {
  constructor(
    private readonly board: Board,
    private readonly policy: SettlementPolicy,
    /** What the run did to its workspace, before it is settled. */
    private readonly judge: (run: RunRecord) => Promise<RunJudgement> = async () => ({}),
  ) {}

  /** The run `token` belongs to: 401 without one, 403 for another task's (or no) run. */
  async authorize(taskId: string, token: string | null): Promise<RunRecord> {
    if (!token)
      throw new AppError(
        'UNAUTHORIZED',
        'worker routes need Authorization: Bearer $GATEHOUSE_RUN_TOKEN',
        { headers: { 'www-authenticate': BEARER_CHALLENGE } },
      );
    await this.board.get(taskId);
    const run = await this.board.runs.byTokenHash(hashToken(token));
    if (!run || run.taskId !== taskId)
      throw new AppError('FORBIDDEN', `this token does not belong to a run of task ${taskId}`);
    return run;
  }

  complete(
    taskId: string,
    token: string | null,
    body: { summary?: string | undefined; result?: unknown },
  ): Promise<Task> {
    return this.finish(taskId, token, 'completed', {
      summary: body.summary ?? null,
      result: body.result,
    });
  }

  block(taskId: string, token: string | null, reason: string): Promise<Task> {
    return this.finish(taskId, token, 'blocked', { blockReason: reason });
  }

  async heartbeat(taskId: string, token: string | null, note: string | undefined): Promise<Task> {
    const run = await this.authorize(taskId, token);
    return this.board.transact(async (tx) => {
      if (!(await heartbeat(tx, taskId, run.id, note, HEARTBEAT_EVENT_MS)))
        throw await this.stale(tx, taskId, run);
      return (await tx.store.tasks.get(taskId))!;
    });
  }

  private async finish(
    taskId: string,
    token: string | null,
    outcome: Extract<RunOutcome, 'completed' | 'blocked'>,
    fields: { summary?: string | null; result?: unknown; blockReason?: string },
  ): Promise<Task> {
    const run = await this.authorize(taskId, token);
    // The worker is still running: what its group holds now is the run's, so its leftovers
    // can be told apart later, even by the next instance.
    const leader = leaderOf(run);
    const held = leader && pidExists(leader.pid, leader) ? startTimeNow() : null;
    const judged = run.endedAt === null ? await this.judge(run) : {};
    return this.board.transact(async (tx) => {
      const settled = await settleRun(tx, this.policy, {
        taskId,
        runId: run.id,
        outcome,
        terminating: null,
        groupHeldUntil: held,
        ...fields,
        ...judged,
      });
      if (settled) return settled;
      // The same verdict repeated by the task's latest run is answered as before, changing
      // nothing; an older run's token is refused once a newer run exists.
      const latest = (await tx.store.runs.forTask(taskId)).at(-1);
      if (latest?.id === run.id && latest.outcome === outcome)
        return (await tx.store.tasks.get(taskId))!;
      throw await this.stale(tx, taskId, run);
    });
  }

  private async stale(tx: Tx, taskId: string, run: RunRecord): Promise<AppError> {
    const task = await tx.store.tasks.get(taskId);
    if (!task) return new AppError('TASK_NOT_FOUND', `no task ${taskId}`);
    const why =
      task.currentRunId === run.id
        ? `its worker is being terminated`
        : `run ${run.id} is not its current run`;
    return new AppError('RUN_MISMATCH', `task ${taskId} is ${task.status}; ${why}`);
  }
}
