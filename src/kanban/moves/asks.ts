// Moves of an agent talking back (docs/mcp.md): the question it asks a person, the progress it
// reports, and a person's answer, which sends the task back to its agent.
import { AppError } from '../../errors.js';
import type { TaskProgress, TaskQuestion } from '../model/asks.js';
import type { Task } from '../model/types.js';
import { WRITES } from '../store/records/task-writes.js';
import { applyMove } from './apply.js';
import { parentsAllDone } from './children.js';
import type { Tx } from './tx.js';

/**
 * Records the question of the task's live run `runId`: its completion then blocks the task on
 * it. False when the run is not the task's live one any more.
 */
export async function askQuestion(
  tx: Tx,
  taskId: string,
  runId: string,
  text: string,
  options: string[] | null,
): Promise<boolean> {
  const question: TaskQuestion = { text, options, runId, askedAt: tx.now };
  const won = await tx.store[WRITES].change(
    taskId,
    { status: 'running', runId },
    { question: JSON.stringify(question) },
  );
  if (won) tx.emit({ taskId, runId, kind: 'question_asked', payload: { question: text, options } });
  return won;
}

/**
 * Records the progress of the task's live run, which counts as its heartbeat (the lease's clock);
 * its event is written at most once per `coalesceMs`. False when the run is not live.
 */
export async function reportProgress(
  tx: Tx,
  task: Task,
  runId: string,
  note: string,
  percent: number | null,
  coalesceMs: number,
): Promise<boolean> {
  const progress: TaskProgress = { note, percent, runId, at: tx.now };
  const won = await tx.store[WRITES].change(
    task.id,
    { status: 'running', runId },
    { last_heartbeat_at: tx.now, progress: JSON.stringify(progress) },
  );
  if (!won) return false;
  const last = task.progress?.runId === runId ? task.progress.at : null;
  if (last === null || tx.now - last >= coalesceMs)
    tx.emit({ taskId: task.id, runId, kind: 'progress', payload: { note, percent } });
  return true;
}

/** The answer to the question a blocked task waits on: it runs again, told the answer. */
export async function answerQuestion(
  tx: Tx,
  id: string,
  text: string,
  author: string,
): Promise<Task> {
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  if (task.status !== 'blocked' || task.blockKind !== 'question' || task.question === null)
    throw new AppError(
      'INVALID_TRANSITION',
      `task ${id} is ${task.status}${task.question ? ' and its agent is still working' : ''}: no question of its waits for an answer`,
    );
  const instructions = `${author} answered your question "${task.question.text}":\n\n${text}`;
  const to = await applyMove(tx, task, 'follow_up', {
    parentsDone: await parentsAllDone(tx, task),
    details: {
      consecutive_failures: 0,
      completed_at: null,
      instructions,
      question: null,
    },
  });
  if (!to) throw new AppError('INVALID_TRANSITION', `task ${id} changed while being answered`);
  tx.emit({ taskId: id, runId: null, kind: 'answered', payload: { text, author, status: to } });
  return (await tx.store.tasks.get(id))!;
}
