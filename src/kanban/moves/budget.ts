// Moves of budgets (docs/budgets.md): the check under a claim (a task at or over its budget is
// blocked, not started; a profile over its daily budget is held until the next UTC day), and a
// person's raise, which unblocks a task its budget blocked.
import { AppError } from '../../errors.js';
import {
  budgetNearing,
  budgetReached,
  fullBudget,
  spentByRuns,
  spentOf,
  utcDay,
  type Budget,
  type DailyBudget,
  type Spent,
} from '../model/budget.js';
import type { Task } from '../model/types.js';
import { WRITES } from '../store/records/task-writes.js';
import { applyMove } from './apply.js';
import { unblockTask } from './unblock.js';
import type { Tx } from './tx.js';

/** A profile's budgets, as a claim checks them. */
export interface ProfileBudgets {
  /** Each of its tasks' budget unless the task has its own. */
  task: Budget | null;
  daily: DailyBudget | null;
}

/** What the task's runs spent. */
export async function spentBy(tx: Pick<Tx, 'store'>, taskId: string): Promise<Spent> {
  return spentByRuns(await tx.store.runs.forTask(taskId));
}

/**
 * Whether the claim of `task` (locked, ready) for `profile` may go on: false when its profile's
 * daily budget is spent (held until the next UTC day) or the task's budget is (blocked).
 */
export async function withinBudget(
  tx: Tx,
  task: Task,
  profile: string,
  budgets: ProfileBudgets,
): Promise<boolean> {
  if (budgets.daily) {
    const day = utcDay(tx.now);
    const today = spentOf(await tx.store.runs.usageSince(profile, day.start));
    if (budgetReached(budgets.daily, today) !== null) {
      const reason = 'daily budget';
      if (await tx.store.holds.hold({ profile, until: day.next, reason, at: tx.now }))
        tx.emit({
          taskId: task.id,
          runId: null,
          kind: 'profile_held',
          payload: { profile, until: day.next, reason },
        });
      return false;
    }
  }
  const budget = task.budget ?? budgets.task;
  if (!budget) return true;
  const runs = await tx.store.runs.forTask(task.id);
  const spent = spentByRuns(runs);
  const reason = budgetReached(budget, spent);
  if (reason !== null) {
    if (await applyMove(tx, task, 'budget_block', { reason, blockKind: 'budget' }))
      tx.emit({
        taskId: task.id,
        runId: null,
        kind: 'budget_reached',
        payload: { reason, budget, spent },
      });
    return false;
  }
  // Its last run took it past 80 % of a figure: said once, as that run's spend is first seen.
  const before = spentByRuns(runs.slice(0, -1));
  const nearing = budgetNearing(budget, spent);
  if (nearing.length > 0 && budgetNearing(budget, before).length === 0)
    tx.emit({
      taskId: task.id,
      runId: null,
      kind: 'budget_warning',
      payload: { reason: `spent ${nearing.join(', ')}`, budget, spent },
    });
  return true;
}

/** Its live run passed 80 % of its tokens budget (said once per run). */
export async function warnBudget(
  tx: Tx,
  taskId: string,
  runId: string,
  reason: string,
  budget: Budget,
): Promise<void> {
  const task = await tx.store.tasks.get(taskId);
  if (!task || task.currentRunId !== runId) return;
  tx.emit({
    taskId,
    runId,
    kind: 'budget_warning',
    payload: { reason, budget, spent: await spentBy(tx, taskId) },
  });
}

/**
 * Raises the task's budget: the figures given replace its own (or its profile's, which it then
 * has as its own). A task its budget blocked goes back to ready when the new one has room.
 */
export async function raiseBudget(
  tx: Tx,
  id: string,
  patch: Partial<Budget>,
  profileBudget: Budget | null,
  by: string,
): Promise<Task> {
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  if (task.status === 'archived')
    throw new AppError('INVALID_TRANSITION', `task ${id} is archived`);
  const budget = fullBudget({ ...(task.budget ?? profileBudget ?? {}), ...patch });
  const spent = await spentBy(tx, id);
  const still = budgetReached(budget, spent);
  if (task.blockKind === 'budget' && still !== null)
    throw new AppError(
      'VALIDATION_FAILED',
      `the new budget is spent already (${still.replace('budget reached (', '').replace(/\)$/, '')}): raise it past what was spent`,
    );
  const written = await tx.store[WRITES].change(
    id,
    { status: task.status, runId: task.currentRunId },
    { budget: JSON.stringify(budget), updated_at: tx.now },
  );
  if (!written)
    throw new AppError('INVALID_TRANSITION', `task ${id} changed while its budget was raised`);
  tx.emit({ taskId: id, runId: null, kind: 'budget_raised', payload: { budget, by } });
  if (task.status === 'blocked' && task.blockKind === 'budget') return unblockTask(tx, id);
  return (await tx.store.tasks.get(id))!;
}
