// Move: edit a task's details (never its status), in any status but archived.
import { AppError } from '../../errors.js';
import { checkTitle } from '../model/task-title.js';
import type { Task } from '../model/types.js';
import { WRITES } from '../store/records/task-writes.js';
import type { TaskInput } from './create-task.js';
import { applyMove } from './apply.js';
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
  await regate(tx, task, patch);
  return (await tx.store.tasks.get(id))!;
}

/** What an approval is of (docs/mcp.md): an edit of any of these asks for a new one. */
const APPROVED_FIELDS = ['title', 'body', 'assignee', 'repo', 'model'] as const;

/**
 * A task whose first run waits for approval, edited before that run in what it asks: its
 * revision moves on, and an approval of the old one no longer lets it run.
 */
async function regate(tx: Tx, task: Task, patch: TaskPatch): Promise<void> {
  if (task.approval === null || task.startedAt !== null) return;
  const changed = APPROVED_FIELDS.filter(
    (f) => patch[f] !== undefined && patch[f] !== (task as unknown as Record<string, unknown>)[f],
  );
  if (changed.length === 0) return;
  const revision = task.approval.revision + 1;
  const approval = { ...task.approval, revision };
  const edited = (await tx.store.tasks.get(task.id))!;
  await tx.store[WRITES].change(
    task.id,
    { status: edited.status, runId: edited.currentRunId },
    { approval: JSON.stringify(approval) },
  );
  if (edited.status === 'ready') await applyMove(tx, { ...edited, approval }, 'await_approval');
  tx.emit({
    taskId: task.id,
    runId: null,
    kind: task.approval.approvedRevision === null ? 'approval_requested' : 'approval_invalidated',
    payload:
      task.approval.approvedRevision === null ? { revision } : { revision, fields: [...changed] },
  });
}
