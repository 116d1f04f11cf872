// Move: an operator unblocks a task (blocked → ready or todo), resetting its failure count;
// parents archived before they were done are dropped, since they never will be.
import { AppError } from '../../errors.js';
import { awaitsApproval } from '../model/asks.js';
import { parentSatisfied } from '../model/transitions.js';
import type { Task } from '../model/types.js';
import { WRITES } from '../store/records/task-writes.js';
import { applyMove } from './apply.js';
import type { Tx } from './tx.js';

export async function unblockTask(tx: Tx, id: string): Promise<Task> {
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  if (task.status !== 'blocked')
    throw new AppError('INVALID_TRANSITION', `task ${id} is ${task.status}, not blocked`);
  let parentsDone = true;
  for (const parentId of task.parents) {
    const parent = await tx.store.tasks.get(parentId);
    if (parent?.status === 'archived' && !parentSatisfied(parent))
      await tx.store[WRITES].unlinkParent(id, parentId);
    else if (!parentSatisfied(parent)) parentsDone = false;
  }
  const to = await applyMove(tx, task, 'unblock', {
    // A task whose first run waits for a person's approval waits for it in todo.
    parentsDone: parentsDone && !awaitsApproval(task.approval),
    // A question nobody answered is dropped with the block.
    details: { consecutive_failures: 0, question: null },
  });
  if (!to) throw new AppError('INVALID_TRANSITION', `task ${id} changed while being unblocked`);
  tx.emit({ taskId: id, runId: null, kind: 'unblocked', payload: { status: to } });
  return (await tx.store.tasks.get(id))!;
}
