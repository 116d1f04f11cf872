// Move: a comment on a task (its status is untouched).
import { AppError } from '../../errors.js';
import type { Comment } from '../model/types.js';
import { WRITES } from '../store/records/task-writes.js';
import type { Tx } from './tx.js';

export async function addComment(
  tx: Tx,
  taskId: string,
  text: string,
  author: string,
  /** Written by its agent's run through MCP (docs/mcp.md). */
  byRun: string | null = null,
): Promise<Comment> {
  if (!(await tx.store.tasks.get(taskId)))
    throw new AppError('TASK_NOT_FOUND', `no task ${taskId}`);
  const id = await tx.store[WRITES].addComment(taskId, author, text, tx.now);
  tx.emit({
    taskId,
    runId: byRun,
    kind: 'commented',
    payload: { commentId: id, author, text, ...(byRun ? { via: 'mcp' as const } : {}) },
  });
  return { id, taskId, author, text, at: tx.now };
}
