// Claiming a ready task for a new run: compare-and-set with a lease, parents re-checked inside.
import type { Board } from './board.js';
import { hashToken, newRunId, newRunToken } from './ids.js';
import type { RunRecord } from './run-store.js';
import { transition } from './transitions.js';
import type { Task } from './types.js';

export interface ClaimRequest {
  taskId: string;
  profile: string;
  leaseMs: number;
  keepDescendants: boolean;
  /** Where the run's log goes, from its id. */
  logPathFor: (runId: string) => string;
}

export interface Claim {
  task: Task;
  run: RunRecord;
  /** The run's secret, handed to the worker; only its hash is stored. */
  token: string;
}

/** Claims the task if it is still ready, due and all its parents are done; null otherwise. */
export function claimTask(board: Board, req: ClaimRequest): Claim | null {
  return board.transact((emit, now) => {
    const task = board.tasks.get(req.taskId);
    if (!task || (task.notBefore !== null && task.notBefore > now)) return null;
    const parentsDone = task.parents.every((p) => board.tasks.get(p)?.status === 'done');
    if (!parentsDone || transition(task.status, 'claim', { parentsDone }) === null) return null;
    const runId = newRunId();
    const token = newRunToken();
    const won = board.tasks.cas(
      task.id,
      { status: 'ready', runId: null },
      {
        status: 'running',
        current_run_id: runId,
        started_at: now,
        updated_at: now,
        lease_expires_at: now + req.leaseMs,
        last_heartbeat_at: null,
        terminating: null,
        not_before: null,
      },
    );
    if (!won) return null;
    board.runs.create({
      id: runId,
      taskId: task.id,
      profile: req.profile,
      tokenHash: hashToken(token),
      startedAt: now,
      logPath: req.logPathFor(runId),
      keepDescendants: req.keepDescendants,
    });
    emit({ taskId: task.id, runId, kind: 'claimed', payload: { profile: req.profile } });
    return { task: board.tasks.get(task.id)!, run: board.runs.get(runId)!, token };
  });
}
