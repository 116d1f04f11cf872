// Moves of a task's pull request (docs/pull-requests.md): what the forge said recorded, and the
// task moved by it: done when merged (or nothing to propose, or checks passed), blocked when
// closed or out of rounds, back to review when reopened, back to its agent with feedback.
import { AppError } from '../../errors.js';
import type { NewEvent } from '../model/events.js';
import type { PrSync, TaskPr } from '../model/pull-request.js';
import type { TaskMove } from '../model/transitions.js';
import type { Task } from '../model/types.js';
import { WRITES } from '../store/records/task-writes.js';
import { applyMove } from './apply.js';
import { parentsAllDone, promoteChildren } from './children.js';
import type { Tx } from './tx.js';

/** The PR as shown and as followed; undefined leaves a column as it is, null clears it. */
export interface PrChange {
  pr?: TaskPr | null;
  sync?: PrSync | null;
}

function columns(change: PrChange) {
  return {
    ...(change.pr !== undefined
      ? { pr: change.pr === null ? null : JSON.stringify(change.pr) }
      : {}),
    ...(change.sync !== undefined
      ? { pr_sync: change.sync === null ? null : JSON.stringify(change.sync) }
      : {}),
  };
}

function emitAll(tx: Tx, events: readonly NewEvent[]): void {
  for (const event of events) tx.emit(event);
}

/**
 * Records what was learnt of the PR without moving the task; the task as it is now, or null when
 * it is gone, archived, or was changed meanwhile (`expect`: the status it was read in).
 */
export async function recordPr(
  tx: Tx,
  id: string,
  expect: Task['status'] | null,
  change: PrChange,
  events: readonly NewEvent[] = [],
): Promise<Task | null> {
  const task = await tx.store.tasks.get(id);
  if (!task || task.status === 'archived' || (expect !== null && task.status !== expect))
    return null;
  const set = columns(change);
  // Only events to say: nothing of the row changes.
  if (Object.keys(set).length === 0) {
    emitAll(tx, events);
    return task;
  }
  const won = await tx.store[WRITES].change(
    id,
    { status: task.status, runId: task.currentRunId },
    set,
  );
  if (!won) return null;
  emitAll(tx, events);
  return tx.store.tasks.get(id);
}

/**
 * Moves the task by what its PR did (pr_done, pr_block, pr_reopen, or follow_up for feedback),
 * with the PR recorded in the same statement; null when the move does not apply to it now.
 */
export async function movePr(
  tx: Tx,
  id: string,
  move: TaskMove,
  change: PrChange,
  events: readonly NewEvent[],
  opts: { reason?: string; instructions?: string } = {},
): Promise<Task | null> {
  const task = await tx.store.tasks.get(id);
  if (!task) return null;
  const done = move === 'pr_done';
  const to = await applyMove(tx, task, move, {
    parentsDone: move === 'follow_up' ? await parentsAllDone(tx, task) : true,
    ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
    details: {
      ...columns(change),
      ...(done ? { completed_at: tx.now, instructions: null } : {}),
      ...(opts.instructions !== undefined
        ? { instructions: opts.instructions, consecutive_failures: 0, completed_at: null }
        : {}),
    },
  });
  if (!to) return null;
  emitAll(tx, events);
  if (done) await promoteChildren(tx, id);
  return tx.store.tasks.get(id);
}

/** A person's approval waits for the forge while the task's PR is open: merge it there. */
export function refuseApprovalWithOpenPr(task: Task): void {
  if (task.pr?.state === 'open')
    throw new AppError(
      'PR_OPEN',
      `task ${task.id} has pull request #${task.pr.number} open: merge it on the forge (${task.pr.url})`,
    );
}

/** An archived task's open PR is left open on the forge, and said so. */
export function leavePrOpen(tx: Tx, task: Task): void {
  if (task.pr?.state === 'open')
    tx.emit({
      taskId: task.id,
      runId: null,
      kind: 'pr_left_open',
      payload: { number: task.pr.number, url: task.pr.url },
    });
}

/**
 * A forge's webhook delivery, recorded once by its id (a repeat within 24 hours is false and
 * records nothing), with the event that tells every host which tasks' PRs to sync.
 */
export async function recordForgeDelivery(
  tx: Tx,
  repo: string,
  delivery: { id: string; event: string },
  tasks: string[],
): Promise<boolean> {
  const platform = `forge:${repo}`;
  const seen = { id: delivery.id, signature: '' };
  if (await tx.store.platforms.delivery(platform, seen)) return false;
  await tx.store.platforms.recordDelivery(platform, seen, null, tx.now);
  tx.emit({
    taskId: null,
    runId: null,
    kind: 'pr_delivery',
    payload: { repo, event: delivery.event, delivery: delivery.id, tasks },
  });
  return true;
}
