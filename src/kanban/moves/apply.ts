// The one place a task changes status: the transition table decides the target, columnsFor
// decides every column that goes with it, and one compare-and-set writes them.
import { columnsFor, transition, type StatusFacts, type TaskMove } from '../model/transitions.js';
import type { BlockKind } from '../model/asks.js';
import type { Task, TaskStatus } from '../model/types.js';
import { WRITES, type DetailColumns } from '../store/records/task-writes.js';
import type { Tx } from './tx.js';

export interface MoveSpec {
  /** Every parent is done (decides unblock's target). */
  parentsDone?: boolean;
  /** Facts the target status carries (run and lease, cooldown, reason). */
  runId?: string;
  leaseExpiresAt?: number;
  notBefore?: number | null;
  reason?: string;
  /** Why a move to blocked waits for a person (a question). */
  blockKind?: BlockKind;
  details?: DetailColumns;
  /** Extra compare-and-set conditions (the run and pending termination it expects). */
  expectTerminating?: string | null;
}

/**
 * Moves `task` (as read in this transaction) by `move`. Returns the new status, or null when
 * the table does not allow the move from its status or the row changed underneath.
 */
export async function applyMove(
  tx: Tx,
  task: Task,
  move: TaskMove,
  spec: MoveSpec = {},
): Promise<TaskStatus | null> {
  const to = transition(task.status, move, { parentsDone: spec.parentsDone ?? true });
  if (to === null) return null;
  const expect = {
    status: task.status,
    runId: task.currentRunId,
    ...(spec.expectTerminating !== undefined ? { terminating: spec.expectTerminating } : {}),
  };
  const won = await tx.store[WRITES].move(task.id, expect, columnsFor(factsFor(to, spec)), {
    ...spec.details,
    updated_at: tx.now,
  });
  return won ? to : null;
}

function factsFor(status: TaskStatus, spec: MoveSpec): StatusFacts {
  switch (status) {
    case 'running':
      if (spec.runId === undefined || spec.leaseExpiresAt === undefined)
        throw new Error('a move to running needs a run and a lease');
      return { status, runId: spec.runId, leaseExpiresAt: spec.leaseExpiresAt };
    case 'ready':
      return { status, notBefore: spec.notBefore ?? null };
    case 'blocked':
      return {
        status,
        reason: spec.reason ?? 'blocked',
        ...(spec.blockKind ? { kind: spec.blockKind } : {}),
      };
    default:
      return { status };
  }
}
