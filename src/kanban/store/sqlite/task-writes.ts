// Writing tasks: the only statements that change tasks.status. The table's CHECKs reject a row
// whose columns do not match its status.
import type { StatusColumns } from '../../model/transitions.js';
import type { Task } from '../../model/types.js';
import { taskColumns, toTask, type TaskRow } from '../records/task.js';
import {
  updateShape,
  type DetailColumns,
  type Expect,
  type NewTask,
  type RunningColumns,
  type TaskWriter,
} from '../records/task-writes.js';
import type { Db } from './db.js';
import { TASK_COLUMNS } from './task-store.js';

export class TaskWrites implements TaskWriter {
  private readonly insert;
  private readonly insertParent;
  private readonly removeParent;
  private readonly remove;
  private readonly readyRow;
  private readonly insertComment;
  private readonly statements = new Map<string, ReturnType<Db['prepare']>>();

  constructor(private readonly db: Db) {
    this.insert = db
      .prepare(
        `INSERT INTO tasks (id, title, body, assignee, status, priority,
        created_at, updated_at, max_runtime_seconds, max_retries, origin, repo, model, review,
        approval, budget)
        VALUES (@id, @title, @body, @assignee, @status, @priority, @at, @at, @maxRuntimeSeconds,
        @maxRetries, @origin, @repo, @model, @review, @approval, @budget) RETURNING ${taskColumns('@parents')}`,
      )
      .raw();
    this.insertParent = db.prepare('INSERT INTO task_parents (task_id, parent_id) VALUES (?, ?)');
    this.removeParent = db.prepare('DELETE FROM task_parents WHERE task_id = ? AND parent_id = ?');
    this.remove = db.prepare('DELETE FROM tasks WHERE id = ?');
    this.readyRow = db
      .prepare<[string], TaskRow>(
        `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ? AND status = 'ready'`,
      )
      .raw(true);
    this.insertComment = db.prepare<[string, string, string, number]>(
      'INSERT INTO comments (task_id, author, text, at) VALUES (?, ?, ?, ?)',
    );
  }

  /** Inserts the task and its links to its parents; the task as it was written. */
  async create(task: NewTask, status: 'ready' | 'todo', parents: readonly string[]): Promise<Task> {
    const row = this.insert.get({
      ...task,
      status,
      review: task.review === null ? null : task.review ? 1 : 0,
      origin: JSON.stringify(task.origin),
      approval: task.approval === null ? null : JSON.stringify(task.approval),
      budget: task.budget === null ? null : JSON.stringify(task.budget),
      parents: JSON.stringify(parents),
    }) as TaskRow;
    for (const parent of parents) this.insertParent.run(task.id, parent);
    return toTask(row);
  }

  async unlinkParent(taskId: string, parentId: string): Promise<void> {
    this.removeParent.run(taskId, parentId);
  }

  /** Moves the task to a new status with every column that status implies. True if it won. */
  async move(
    id: string,
    expect: Expect,
    to: StatusColumns,
    details: DetailColumns,
  ): Promise<boolean> {
    return this.update(id, expect, { ...details, ...to });
  }

  /** Changes a task without changing its status. True if it won. */
  async change(id: string, expect: Expect, set: DetailColumns | RunningColumns): Promise<boolean> {
    return this.update(id, expect, set);
  }

  /**
   * Takes the ready task's row for a claim: the task, or null when it is not ready or another
   * host is writing it (PostgreSQL skips a locked row; a SQLite writer is alone).
   */
  async lockReady(id: string): Promise<Task | null> {
    const row = this.readyRow.get(id);
    return row ? toTask(row) : null;
  }

  async delete(id: string): Promise<boolean> {
    return this.remove.run(id).changes === 1;
  }

  async addComment(taskId: string, author: string, text: string, at: number): Promise<number> {
    return Number(this.insertComment.run(taskId, author, text, at).lastInsertRowid);
  }

  private update(id: string, expect: Expect, columns: object): boolean {
    const { statuses, names, set } = updateShape(expect, columns);
    const key = `${statuses.length}|${'runId' in expect}|${'terminating' in expect}|${names.join(',')}`;
    let stmt = this.statements.get(key);
    if (!stmt) {
      const where = [`id = @id`, `status IN (${statuses.map((_, i) => `@s${i}`).join(', ')})`];
      if ('runId' in expect) where.push('current_run_id IS @runId');
      if ('terminating' in expect) where.push('terminating IS @terminating');
      const assignments = names.map((c) => `${c} = @set_${c}`).join(', ');
      stmt = this.db.prepare(`UPDATE tasks SET ${assignments} WHERE ${where.join(' AND ')}`);
      this.statements.set(key, stmt);
    }
    const params: Record<string, unknown> = {
      id,
      runId: expect.runId ?? null,
      terminating: expect.terminating ?? null,
    };
    statuses.forEach((s, i) => (params[`s${i}`] = s));
    for (const c of names) params[`set_${c}`] = set[c];
    return stmt.run(params).changes === 1;
  }
}
