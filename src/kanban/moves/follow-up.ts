// Move: a follow-up on a done, blocked or review task (docs/workers.md): it goes back to ready (todo while a
// parent is not done) with `text` as its next run's instructions, in the same workspace, its
// failure count reset. Its children keep what they have: a follow-up does not undo them.
import { AppError } from '../../errors.js';
import type { Task } from '../model/types.js';
import { applyMove } from './apply.js';
import { parentsAllDone } from './children.js';
import { attemptsUnpicked } from '../model/attempts.js';
import type { Tx } from './tx.js';

export async function followUp(tx: Tx, id: string, text: string, author: string): Promise<Task> {
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  if (task.status !== 'done' && task.status !== 'blocked' && task.status !== 'review')
    throw new AppError(
      'INVALID_TRANSITION',
      `task ${id} is ${task.status}: a follow-up is for a done, blocked or review task`,
    );
  const unpicked = attemptsUnpicked(task);
  if (unpicked) throw new AppError('INVALID_TRANSITION', unpicked);
  const parentsDone = await parentsAllDone(tx, task);
  const to = await applyMove(tx, task, 'follow_up', {
    parentsDone,
    details: { consecutive_failures: 0, completed_at: null, instructions: text, question: null },
  });
  if (!to) throw new AppError('INVALID_TRANSITION', `task ${id} changed while being followed up`);
  tx.emit({ taskId: id, runId: null, kind: 'followed_up', payload: { text, author, status: to } });
  return (await tx.store.tasks.get(id))!;
}
