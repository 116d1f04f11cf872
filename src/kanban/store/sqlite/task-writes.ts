// Writing tasks: the only statements that change tasks.status. Only the moves may import this
// module (eslint no-restricted-imports), and the table's CHECKs reject a row whose columns do
// not match its status.
import type { StatusColumns } from '../../model/transitions.js';
import type { Origin, Task, TaskStatus } from '../../model/types.js';
import type { Db } from './db.js';
import { TASK_COLUMNS, taskColumns, toTask, type TaskRow } from './task-store.js';

/** The key under which a Store carries its writer; importing it is what the lint rule guards. */
export const WRITES = Symbol('task writes');

export interface NewTask {
  id: string;
  title: string;
  body: string;
  assignee: string | null;
  priority: number;
  maxRuntimeSeconds: number | null;
  maxRetries: number | null;
  repo: string | null;
  /** The model its agent profile is to use (one of the profile's models), or null. */
  model: string | null;
  /** Its completed runs wait in review (SPEC 12); null: as its profile says. */
  review: boolean | null;
  origin: Origin;
  at: number;
}

/** Columns that do not decide or follow from the status: details, counters, times. */
export interface DetailColumns {
  title?: string;
  body?: string;
  assignee?: string | null;
  priority?: number;
  max_runtime_seconds?: number | null;
  max_retries?: number | null;
  updated_at?: number;
  started_at?: number | null;
  completed_at?: number | null;
  consecutive_failures?: number;
  last_failure_error?: string | null;
  result?: string | null;
  summary?: string | null;
  /** The task's workspace (JSON of a WorkspaceRecord), SPEC 10. */
  workspace?: string | null;
  instructions?: string | null;
}

/** What a running task may change without leaving running: its lease and pending termination. */
export interface RunningColumns {
  lease_expires_at?: number;
  last_heartbeat_at?: number;
  terminating?: string | null;
}

/** The compare-and-set condition: the row must still be in this state. */
export interface Expect {
  status: TaskStatus | readonly TaskStatus[];
  runId?: string | null;
  terminating?: string | null;
}

/**
 * What a compare-and-set update writes and checks, on either engine: the statuses it expects
 * and the columns it sets (those given, in a stable order, so each shape is one statement).
 */
export function updateShape(
  expect: Expect,
  columns: object,
): { statuses: readonly TaskStatus[]; names: string[]; set: Record<string, unknown> } {
  const set = columns as Record<string, unknown>;
  const statuses = typeof expect.status === 'string' ? [expect.status] : expect.status;
  const names = Object.keys(set)
    .filter((c) => set[c] !== undefined)
    .sort();
  return { statuses, names, set };
}

export class TaskWrites {
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
        created_at, updated_at, max_runtime_seconds, max_retries, origin, repo, model, review)
        VALUES (@id, @title, @body, @assignee, @status, @priority, @at, @at, @maxRuntimeSeconds,
        @maxRetries, @origin, @repo, @model, @review) RETURNING ${taskColumns('@parents')}`,
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
