// Move: create a task, ready or waiting in todo on its parents.
import { AppError } from '../../errors.js';
import { newTaskId } from '../model/ids.js';
import { checkTitle } from '../model/task-title.js';
import { initialStatus } from '../model/transitions.js';
import type { Origin, Task } from '../model/types.js';
import { fullBudget, type Budget } from '../model/budget.js';
import { WRITES } from '../store/records/task-writes.js';
import type { Tx } from './tx.js';

export interface TaskInput {
  title: string;
  body?: string | undefined;
  assignee?: string | null | undefined;
  priority?: number | undefined;
  parents?: string[] | undefined;
  maxRuntimeSeconds?: number | null | undefined;
  maxRetries?: number | null | undefined;
  /** A name in workspaces.repos, checked by the caller against the configuration. */
  repo?: string | null | undefined;
  /** One of its agent profile's models, checked by the caller against the configuration. */
  model?: string | null | undefined;
  /** Its completed runs wait in review for a person (docs/workers.md); null: as its profile says. */
  review?: boolean | null | undefined;
  /**
   * Its first run waits for a person's approval (docs/mcp.md): the task's own `approval`, or its
   * profile's, as the caller resolved them.
   */
  needsApproval?: boolean | undefined;
  /** Its own budget (docs/budgets.md); absent figures have none. Absent: its profile's. */
  budget?: Partial<Budget> | null | undefined;
}

/** Creates the task. */
export async function createTask(tx: Tx, input: TaskInput, origin: Origin): Promise<Task> {
  checkTitle(input.title);
  const parents = [...new Set(input.parents ?? [])];
  let parentsDone = true;
  for (const parentId of parents) {
    const parent = await tx.store.tasks.get(parentId);
    if (!parent) throw new AppError('VALIDATION_FAILED', `parent ${parentId} does not exist`);
    if (parent.status === 'archived')
      throw new AppError('VALIDATION_FAILED', `parent ${parentId} is archived`);
    if (parent.status !== 'done') parentsDone = false;
  }
  const id = newTaskId();
  const approval = input.needsApproval
    ? { revision: 1, approvedRevision: null, by: null, at: null }
    : null;
  const status = initialStatus({ parentsDone: parentsDone && approval === null }) as
    'ready' | 'todo';
  const task = await tx.store[WRITES].create(
    {
      id,
      title: input.title,
      body: input.body ?? '',
      assignee: input.assignee ?? null,
      priority: input.priority ?? 0,
      maxRuntimeSeconds: input.maxRuntimeSeconds ?? null,
      maxRetries: input.maxRetries ?? null,
      repo: input.repo ?? null,
      model: input.model ?? null,
      review: input.review ?? null,
      approval,
      budget: input.budget ? fullBudget(input.budget) : null,
      origin,
      at: tx.now,
    },
    status,
    parents,
  );
  tx.emit({
    taskId: id,
    runId: null,
    kind: 'created',
    payload: { title: task.title, status: task.status, origin },
  });
  if (approval)
    tx.emit({ taskId: id, runId: null, kind: 'approval_requested', payload: { revision: 1 } });
  return task;
}
