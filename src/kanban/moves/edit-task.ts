// Move: edit a task's details (never its status), in any status but archived.
import { AppError } from '../../errors.js';
import { checkTitle } from '../model/task-title.js';
import type { Task } from '../model/types.js';
import { WRITES } from '../store/records/task-writes.js';
import type { TaskInput } from './create-task.js';
import type { Tx } from './tx.js';

export type TaskPatch = Partial<Omit<TaskInput, 'parents'>>;

export async function editTask(tx: Tx, id: string, patch: TaskPatch): Promise<Task> {
  if (patch.title !== undefined) checkTitle(patch.title);
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  if (task.status === 'archived')
    throw new AppError('INVALID_TRANSITION', `task ${id} is archived`);
  const won = await tx.store[WRITES].change(
    id,
    { status: task.status, runId: task.currentRunId },
    {
      title: patch.title,
      body: patch.body,
      assignee: patch.assignee,
      priority: patch.priority,
      max_runtime_seconds: patch.maxRuntimeSeconds,
      max_retries: patch.maxRetries,
      updated_at: tx.now,
    },
  );
  if (!won)
    throw new AppError('INVALID_TRANSITION', `task ${id} changed while being edited; try again`);
  const fields = Object.keys(patch).filter((k) => patch[k as keyof TaskPatch] !== undefined);
  tx.emit({ taskId: id, runId: null, kind: 'edited', payload: { fields } });
  return (await tx.store.tasks.get(id))!;
}
