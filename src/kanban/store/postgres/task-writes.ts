// Writing tasks on PostgreSQL: the only statements that change tasks.status there. The compare-and-set is the UPDATE's WHERE: under READ
// COMMITTED a second writer of the row waits for the first, then finds the row changed.
import type { StatusColumns } from '../../model/transitions.js';
import { awaitingOf } from '../../model/asks.js';
import type { Task } from '../../model/types.js';
import { scheduleOf, toTask, type TaskRow } from '../records/task.js';
import {
  updateShape,
  type DetailColumns,
  type Expect,
  type NewTask,
  type RunningColumns,
  type TaskWriter,
} from '../records/task-writes.js';
import { arrays, rows, run, stored, type Queryable } from './query.js';
import { COLUMNS } from './task-store.js';

/** A new task as the board holds it: what was written, the board's defaults for the rest. */
function createdTask(task: NewTask, status: 'ready' | 'todo', parents: readonly string[]): Task {
  const maybe = (text: string | null) => (text === null ? null : stored(text));
  return {
    id: task.id,
    title: stored(task.title),
    body: stored(task.body),
    assignee: maybe(task.assignee),
    status,
    priority: task.priority,
    parents: parents.map(stored),
    createdAt: task.at,
    updatedAt: task.at,
    startedAt: null,
    completedAt: null,
    maxRuntimeSeconds: task.maxRuntimeSeconds,
    maxRetries: task.maxRetries,
    consecutiveFailures: 0,
    lastFailureError: null,
    result: null,
    summary: null,
    currentRunId: null,
    blockReason: null,
    notBefore: null,
    // Written as JSON, which escapes what text cannot hold: read back as it was.
    origin: task.origin,
    schedule: scheduleOf(task.origin),
    repo: maybe(task.repo),
    instructions: null,
    model: maybe(task.model),
    review: task.review,
    workspace: null,
    pr: null,
    blockKind: null,
    question: null,
    progress: null,
    approval: task.approval,
    budget: task.budget,
    attemptOf: null,
    attempts: null,
    judge: null,
    awaiting: awaitingOf(status, task.approval, null),
  };
}

export class PgTaskWrites implements TaskWriter {
  constructor(
    private readonly db: Queryable,
    /** The transaction waits for this statement's answer before it commits. */
    private readonly answerLater: (answer: Promise<unknown>) => void,
  ) {}

  /**
   * A task without parents is sent without waiting for the answer (the commit waits for it): a
   * POST's transaction is one round trip, not two, and the moves of a group do not wait for
   * each other's. Such an INSERT fails only on what no input reaches (a task id drawn twice):
   * its group then fails, and is tried again a move at a time (see the Transactor). Links to
   * parents are waited for. The task is what was written, with the board's defaults for the
   * rest, as PostgreSQL stores the text.
   */
  async create(task: NewTask, status: 'ready' | 'todo', parents: readonly string[]): Promise<Task> {
    const inserted = run(
      this.db,
      `INSERT INTO tasks (id, title, body, assignee, status, priority, created_at, updated_at,
        max_runtime_seconds, max_retries, origin, repo, model, review, approval, budget)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [
        task.id,
        task.title,
        task.body,
        task.assignee,
        status,
        task.priority,
        task.at,
        task.maxRuntimeSeconds,
        task.maxRetries,
        JSON.stringify(task.origin),
        task.repo,
        task.model,
        task.review,
        task.approval === null ? null : JSON.stringify(task.approval),
        task.budget === null ? null : JSON.stringify(task.budget),
      ],
    );
    if (parents.length === 0) this.answerLater(inserted);
    else
      await Promise.all([
        inserted,
        // One statement for every link, numbered (ord) in the order given.
        run(
          this.db,
          `INSERT INTO task_parents (task_id, parent_id)
            SELECT $1, parent FROM unnest($2::text[]) WITH ORDINALITY AS p (parent, n) ORDER BY n`,
          [task.id, parents],
        ),
      ]);
    return createdTask(task, status, parents);
  }

  async unlinkParent(taskId: string, parentId: string): Promise<void> {
    await run(this.db, 'DELETE FROM task_parents WHERE task_id = $1 AND parent_id = $2', [
      taskId,
      parentId,
    ]);
  }

  async move(
    id: string,
    expect: Expect,
    to: StatusColumns,
    details: DetailColumns,
  ): Promise<boolean> {
    return this.update(id, expect, { ...details, ...to });
  }

  async change(id: string, expect: Expect, set: DetailColumns | RunningColumns): Promise<boolean> {
    return this.update(id, expect, set);
  }

  async lockReady(id: string): Promise<Task | null> {
    const [row] = await arrays<TaskRow>(
      this.db,
      // NO KEY UPDATE: not held up by the key share a comment or a child's link takes.
      `SELECT ${COLUMNS} FROM tasks WHERE id = $1 AND status = 'ready' FOR NO KEY UPDATE SKIP LOCKED`,
      [id],
    );
    return row ? toTask(row) : null;
  }

  async delete(id: string): Promise<boolean> {
    return (await run(this.db, 'DELETE FROM tasks WHERE id = $1', [id])) === 1;
  }

  async addComment(taskId: string, author: string, text: string, at: number): Promise<number> {
    const [row] = await rows<{ id: number }>(
      this.db,
      'INSERT INTO comments (task_id, author, text, at) VALUES ($1, $2, $3, $4) RETURNING id',
      [taskId, author, text, at],
    );
    return row!.id;
  }

  private async update(id: string, expect: Expect, columns: object): Promise<boolean> {
    const { statuses, names, set } = updateShape(expect, columns);
    const values: unknown[] = [id, statuses];
    const where = ['id = $1', 'status = ANY($2::text[])'];
    if ('runId' in expect)
      where.push(`current_run_id IS NOT DISTINCT FROM $${values.push(expect.runId ?? null)}`);
    if ('terminating' in expect)
      where.push(`terminating IS NOT DISTINCT FROM $${values.push(expect.terminating ?? null)}`);
    // Column names come from the typed column sets, never from input.
    const assignments = names.map((c) => `${c} = $${values.push(set[c])}`).join(', ');
    return (
      (await run(
        this.db,
        `UPDATE tasks SET ${assignments} WHERE ${where.join(' AND ')}`,
        values,
      )) === 1
    );
  }
}
