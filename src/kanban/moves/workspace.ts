// Moves of a task's workspace record (docs/workspaces.md): made or found for a run, and retired once its
// content is safe. The record is a detail: no status changes with it.
import type { WorkspaceRecord } from '../../workspaces/types.js';
import type { TaskStatus } from '../model/types.js';
import { WRITES } from '../store/records/task-writes.js';
import type { Tx } from './tx.js';

/** The running task's workspace for its current run; false if the run is no longer current. */
export async function recordWorkspace(
  tx: Tx,
  taskId: string,
  runId: string,
  record: WorkspaceRecord,
  /** Where it was made from, when it was made now. */
  source: string,
): Promise<boolean> {
  const before = (await tx.store.tasks.get(taskId))?.workspace ?? null;
  const won = await tx.store[WRITES].change(
    taskId,
    { status: 'running', runId },
    { workspace: JSON.stringify(record) },
  );
  // Made again here because the host that had it is gone (declared dead, or renamed).
  if (won && before && before.state === 'active' && before.host !== record.host)
    tx.emit({
      taskId,
      runId,
      kind: 'workspace_recreated',
      payload: { fromHost: before.host, branch: record.branch, from: source },
    });
  return won;
}

export interface Retirement {
  state: 'preserved' | 'removed';
  preservedRef: string | null;
  commit: string | null;
  why: string;
  branchDeleted: boolean;
}

const SETTLED: readonly TaskStatus[] = ['todo', 'ready', 'review', 'blocked', 'done', 'archived'];

/** The workspace is gone (its content kept where `preservedRef` says): recorded, with events. */
export async function retireWorkspace(
  tx: Tx,
  taskId: string,
  record: WorkspaceRecord,
  retired: Retirement,
): Promise<void> {
  const task = await tx.store.tasks.get(taskId);
  if (task && task.workspace?.path === record.path) {
    const won = await tx.store[WRITES].change(
      taskId,
      { status: SETTLED.includes(task.status) ? task.status : SETTLED, runId: task.currentRunId },
      {
        workspace: JSON.stringify({
          ...record,
          state: retired.state,
          preservedRef: retired.preservedRef ?? record.preservedRef,
        }),
      },
    );
    // Taken up again meanwhile (claimed): the record is the new run's to keep.
    if (!won) return;
  }
  const taskRef = task ? taskId : null;
  if (retired.preservedRef)
    tx.emit({
      taskId: taskRef,
      runId: null,
      kind: 'workspace_preserved',
      payload: { ref: retired.preservedRef, commit: retired.commit, why: retired.why },
    });
  tx.emit({
    taskId: taskRef,
    runId: null,
    kind: 'workspace_removed',
    payload: { why: retired.why, branchDeleted: retired.branchDeleted },
  });
}
