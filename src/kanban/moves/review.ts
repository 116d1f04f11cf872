// Moves of review (docs/workers.md): a task whose completed run waits for a person is approved (review →
// done, its children promoted as by a completion) or sent back with what to change (review →
// ready, the text its next run's instructions and a comment; not counted as a failure).
import { AppError } from '../../errors.js';
import type { Task } from '../model/types.js';
import { WRITES } from '../store/records/task-writes.js';
import { applyMove } from './apply.js';
import { parentsAllDone, promoteChildren } from './children.js';
import { refuseApprovalWithOpenPr } from './pull-request.js';
import { attemptsUnpicked } from '../model/attempts.js';
import type { Tx } from './tx.js';

async function inReview(tx: Tx, id: string, what: string): Promise<Task> {
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  if (task.status !== 'review')
    throw new AppError(
      'INVALID_TRANSITION',
      `task ${id} is ${task.status}, not in review: ${what}`,
    );
  return task;
}

export async function approveTask(tx: Tx, id: string, by: string): Promise<Task> {
  const task = await inReview(tx, id, 'only a task in review is approved');
  const unpicked = attemptsUnpicked(task);
  if (unpicked) throw new AppError('INVALID_TRANSITION', unpicked);
  refuseApprovalWithOpenPr(task);
  if (!(await applyMove(tx, task, 'approve', { details: { completed_at: tx.now } })))
    throw new AppError('INVALID_TRANSITION', `task ${id} changed while being approved`);
  tx.emit({ taskId: id, runId: null, kind: 'approved', payload: { by } });
  await promoteChildren(tx, id);
  return (await tx.store.tasks.get(id))!;
}

export async function requestChanges(
  tx: Tx,
  id: string,
  text: string,
  author: string,
): Promise<Task> {
  const task = await inReview(tx, id, 'changes are requested of a task in review');
  const unpicked = attemptsUnpicked(task);
  if (unpicked) throw new AppError('INVALID_TRANSITION', unpicked);
  const to = await applyMove(tx, task, 'request_changes', {
    parentsDone: await parentsAllDone(tx, task),
    details: { instructions: text },
  });
  if (!to) throw new AppError('INVALID_TRANSITION', `task ${id} changed while sent back`);
  const commentId = await tx.store[WRITES].addComment(id, author, text, tx.now);
  tx.emit({ taskId: id, runId: null, kind: 'commented', payload: { commentId, author, text } });
  tx.emit({
    taskId: id,
    runId: null,
    kind: 'changes_requested',
    payload: { text, author, status: to },
  });
  return (await tx.store.tasks.get(id))!;
}
