// Moves of a termination: begin (claim the right to end a running task's worker, recorded in
// `terminating` so a restart resumes it) and defer (the worker survived: the task keeps its
// claim and its lease is extended). Finishing is settle.ts with the termination's outcome.
import type { TerminationReport } from '../model/events.js';
import type { RunOutcome } from '../model/types.js';
import type { RunRecord } from '../store/records/run.js';
import { WRITES } from '../store/records/task-writes.js';
import type { Tx } from './tx.js';

/** Why a worker is being terminated; stored in tasks.terminating while it happens. */
export type TerminationOp =
  'archive' | 'reclaim' | 'reclaim_force' | 'timeout' | 'stale' | 'interrupt' | 'budget';

export const TERMINATION_OPS: readonly TerminationOp[] = [
  'archive',
  'reclaim',
  'reclaim_force',
  'timeout',
  'stale',
  'interrupt',
  'budget',
];

/** The run outcome each termination asks for. */
export const TERMINATION_OUTCOME: Record<TerminationOp, RunOutcome> = {
  archive: 'archived',
  reclaim: 'reclaimed',
  reclaim_force: 'reclaimed',
  timeout: 'timed_out',
  stale: 'stale',
  interrupt: 'interrupted',
  budget: 'budget_exceeded',
};

export function isTerminationOp(value: string | null): value is TerminationOp {
  return value !== null && (TERMINATION_OPS as readonly string[]).includes(value);
}

/**
 * Claims the right to terminate the task's current run (only if it is `runId`, when given: the
 * clock decides on a run it read, which may have ended and been followed by another since). An
 * operator's archive or forced reclaim replaces a pending termination that is not being carried
 * out right now (`idle`). Returns the run, or null when the task is not running (that run) or
 * someone else holds the right.
 */
export async function beginTermination(
  tx: Tx,
  taskId: string,
  op: TerminationOp,
  idle: boolean,
  runId?: string,
): Promise<RunRecord | null> {
  const task = await tx.store.tasks.get(taskId);
  if (!task || task.status !== 'running' || task.currentRunId === null) return null;
  if (runId !== undefined && task.currentRunId !== runId) return null;
  const pending = await tx.store.tasks.terminatingOf(taskId);
  const operatorOverride = idle && (op === 'archive' || op === 'reclaim_force') && pending !== op;
  if (pending !== null && !operatorOverride) return null;
  const won = await tx.store[WRITES].change(
    taskId,
    { status: 'running', runId: task.currentRunId, terminating: pending },
    { terminating: op, updated_at: tx.now },
  );
  return won ? await tx.store.runs.get(task.currentRunId) : null;
}

/**
 * Something of the run survived TERM and KILL: the task keeps its claim (and the pending
 * termination, retried every tick), its lease is extended, and `reclaim_deferred` says why.
 */
export async function deferTermination(
  tx: Tx,
  run: RunRecord,
  op: TerminationOp | null,
  report: TerminationReport & { pids: number[] },
  deferMs: number,
  announce: boolean,
): Promise<boolean> {
  const kept = await tx.store[WRITES].change(
    run.taskId,
    { status: 'running', runId: run.id, terminating: op },
    { lease_expires_at: tx.now + deferMs, updated_at: tx.now },
  );
  if (kept && announce) {
    tx.emit({
      taskId: run.taskId,
      runId: run.id,
      kind: 'reclaim_deferred',
      payload: { op: op ?? 'exit', ...report },
    });
  }
  return kept;
}
