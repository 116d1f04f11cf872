// Writing tasks on PostgreSQL: the only statements that change tasks.status there, as
// ../task-writes.ts is on SQLite. The compare-and-set is the UPDATE's WHERE: under READ
// COMMITTED a second writer of the row waits for the first, then finds the row changed.
import type { StatusColumns } from '../../model/transitions.js';
import {
  updateShape,
  type DetailColumns,
  type Expect,
  type NewTask,
  type RunningColumns,
} from '../sqlite/task-writes.js';
import type { Task } from '../../model/types.js';
import { taskColumns, toTask, type TaskRow } from '../sqlite/task-store.js';
import { arrays, rows, run, type Queryable } from './query.js';
import { COLUMNS } from './task-store.js';

export class PgTaskWrites {
  constructor(private readonly db: Queryable) {}

  async create(task: NewTask, status: 'ready' | 'todo', parents: readonly string[]): Promise<Task> {
    const [row] = await arrays<TaskRow>(
      this.db,
      `INSERT INTO tasks (id, title, body, assignee, status, priority, created_at, updated_at,
        max_runtime_seconds, max_retries, origin, repo, model, review)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9, $10, $12, $13, $14) RETURNING ${taskColumns('$11::text')}`,
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
        JSON.stringify(parents),
        task.repo,
        task.model,
        task.review,
      ],
    );
    if (parents.length > 0)
      // One statement for every link, numbered (ord) in the order given.
      await run(
        this.db,
        `INSERT INTO task_parents (task_id, parent_id)
          SELECT $1, parent FROM unnest($2::text[]) WITH ORDINALITY AS p (parent, n) ORDER BY n`,
        [task.id, parents],
      );
    return toTask(row!);
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
