// Move: archive a task that has no worker (any status but running and archived); a running
// task is archived by terminating its worker first (see termination.ts).
import { AppError } from '../../errors.js';
import type { Task } from '../model/types.js';
import { applyMove } from './apply.js';
import { orphanChildren } from './children.js';
import { leavePrOpen } from './pull-request.js';
import type { Tx } from './tx.js';

export async function archiveIdle(tx: Tx, id: string): Promise<Task> {
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  if (task.status === 'running' || !(await applyMove(tx, task, 'archive'))) {
    throw new AppError(
      'INVALID_TRANSITION',
      `task ${id} is ${task.status} and cannot be archived now`,
    );
  }
  tx.emit({
    taskId: id,
    runId: null,
    kind: 'archived',
    payload: { prevPid: null, terminated: false, sigkill: false, survived: false },
  });
  leavePrOpen(tx, task);
  await orphanChildren(tx, id);
  return (await tx.store.tasks.get(id))!;
}
