// Move: delete an archived task; children that waited only on it may now be ready.
import { AppError } from '../../errors.js';
import { canDelete } from '../model/transitions.js';
import { WRITES } from '../store/records/task-writes.js';
import { promoteChildren } from './children.js';
import type { Tx } from './tx.js';

/** Deletes the task and its runs; returns the deleted runs' ids (their folders go too). */
export async function deleteTask(tx: Tx, id: string): Promise<string[]> {
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  if (!canDelete(task.status)) {
    throw new AppError(
      'TASK_NOT_ARCHIVED',
      `task ${id} is ${task.status}; archive it before deleting`,
    );
  }
  const children = await tx.store.tasks.children(id);
  const runIds = (await tx.store.runs.forTask(id)).map((r) => r.id);
  await tx.store[WRITES].delete(id);
  tx.emit({ taskId: id, runId: null, kind: 'deleted', payload: {} });
  await promoteChildren(tx, id, children);
  return runIds;
}
