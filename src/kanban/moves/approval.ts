// Move: a person approves a task's first run (docs/mcp.md): the revision they saw is recorded,
// and the task goes on as any task (to ready, or waiting in todo for its parents).
import { AppError } from '../../errors.js';
import { awaitsApproval } from '../model/asks.js';
import type { Task } from '../model/types.js';
import { WRITES } from '../store/records/task-writes.js';
import { applyMove } from './apply.js';
import { parentsAllDone } from './children.js';
import { attemptsUnpicked } from '../model/attempts.js';
import type { Tx } from './tx.js';

export async function approveRun(
  tx: Tx,
  id: string,
  by: string,
  /** The revision the person saw, when they said: an edit since then is not approved by it. */
  revision: number | null,
): Promise<Task> {
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  if (!awaitsApproval(task.approval))
    throw new AppError(
      'INVALID_TRANSITION',
      `task ${id} is ${task.status}: it waits for no approval`,
    );
  // Its attempts carry the approval (docs/attempts.md): it never runs itself.
  const unpicked = attemptsUnpicked(task);
  if (unpicked) throw new AppError('INVALID_TRANSITION', `${unpicked}; approve its attempts`);
  const current = task.approval!.revision;
  if (revision !== null && revision !== current)
    throw new AppError(
      'INVALID_TRANSITION',
      `task ${id} was edited since revision ${revision}: it is at revision ${current}; look again`,
    );
  const approval = { ...task.approval!, approvedRevision: current, by, at: tx.now };
  const won = await tx.store[WRITES].change(
    id,
    { status: task.status, runId: task.currentRunId },
    { approval: JSON.stringify(approval), updated_at: tx.now },
  );
  if (!won) throw new AppError('INVALID_TRANSITION', `task ${id} changed while being approved`);
  tx.emit({ taskId: id, runId: null, kind: 'approved', payload: { by, revision: current } });
  if (task.status === 'todo' && (await parentsAllDone(tx, task))) {
    const promoted = await applyMove(tx, { ...task, approval }, 'promote');
    if (promoted)
      tx.emit({
        taskId: id,
        runId: null,
        kind: 'promoted',
        payload: { after: null, reason: 'approved' },
      });
  }
  return (await tx.store.tasks.get(id))!;
}
