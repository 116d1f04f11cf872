// Move: give up on a ready task that cannot run here (ready → blocked, with gave_up).
import { applyMove } from './apply.js';
import type { Tx } from './tx.js';

export async function giveUpReady(tx: Tx, taskId: string, reason: string): Promise<boolean> {
  const task = await tx.store.tasks.get(taskId);
  if (task?.status !== 'ready' || !(await applyMove(tx, task, 'give_up', { reason }))) return false;
  tx.emit({ taskId, runId: null, kind: 'gave_up', payload: { reason } });
  return true;
}
