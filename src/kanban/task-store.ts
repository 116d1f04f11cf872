// SQL for tasks, their parent links and comments; every statement prepared once.
import type { Db } from './db.js';
import type { Comment, Origin, Task, TaskStatus } from './types.js';

/** Each row carries its parent ids (in link order) as a JSON array, read in the same statement. */
const PARENTS =
  '(SELECT json_group_array(parent_id) FROM (SELECT parent_id FROM task_parents WHERE task_id = tasks.id ORDER BY rowid)) AS parents';

interface TaskRow {
  parents: string;
  seq: number;
  id: string;
  title: string;
  body: string;
  assignee: string | null;
  status: TaskStatus;
  priority: number;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  completed_at: number | null;
  max_runtime_seconds: number | null;
  max_retries: number | null;
  consecutive_failures: number;
  last_failure_error: string | null;
  result: string | null;
  summary: string | null;
  current_run_id: string | null;
  block_reason: string | null;
  not_before: number | null;
  origin: string;
  lease_expires_at: number | null;
  last_heartbeat_at: number | null;
  terminating: string | null;
}

/** Dispatcher-only facts that the API does not show. */
export interface TaskLease {
  leaseExpiresAt: number | null;
  lastHeartbeatAt: number | null;
  terminating: string | null;
}

export interface NewTask {
  id: string;
  title: string;
  body: string;
  assignee: string | null;
  status: TaskStatus;
  priority: number;
  maxRuntimeSeconds: number | null;
  maxRetries: number | null;
  origin: Origin;
  at: number;
}

export interface TaskFilter {
  status?: TaskStatus | undefined;
  assignee?: string | undefined;
  /** Oldest first (asc, the default) or newest first (desc). */
  order: 'asc' | 'desc';
  /** Continue after this seq (in the chosen order); null from the start. */
  afterSeq: number | null;
  limit: number;
}

/** Columns a compare-and-set may write, by their SQL names. */
export type TaskColumns = Partial<
  Omit<TaskRow, 'seq' | 'id' | 'origin' | 'created_at' | 'parents'>
>;

export class TaskStore {
  private readonly insert;
  private readonly byId;
  private readonly childrenOf;
  private readonly insertParent;
  private readonly remove;
  private readonly insertComment;
  private readonly countByStatus;
  private readonly readyQueue;
  private readonly runningTasks;
  private readonly listStatements = new Map<string, ReturnType<Db['prepare']>>();
  private readonly casStatements = new Map<string, ReturnType<Db['prepare']>>();

  constructor(private readonly db: Db) {
    this.insert = db.prepare(`INSERT INTO tasks (id, title, body, assignee, status, priority,
      created_at, updated_at, max_runtime_seconds, max_retries, origin)
      VALUES (@id, @title, @body, @assignee, @status, @priority, @at, @at, @maxRuntimeSeconds,
      @maxRetries, @origin)`);
    this.byId = db.prepare<[string], TaskRow>(`SELECT *, ${PARENTS} FROM tasks WHERE id = ?`);
    this.childrenOf = db.prepare<[string], { task_id: string }>(
      'SELECT task_id FROM task_parents WHERE parent_id = ?',
    );
    this.insertParent = db.prepare('INSERT INTO task_parents (task_id, parent_id) VALUES (?, ?)');
    this.remove = db.prepare('DELETE FROM tasks WHERE id = ?');
    this.insertComment = db.prepare<[string, string, string, number]>(
      'INSERT INTO comments (task_id, author, text, at) VALUES (?, ?, ?, ?)',
    );
    this.countByStatus = db.prepare<[], { status: TaskStatus; n: number }>(
      'SELECT status, count(*) AS n FROM tasks GROUP BY status',
    );
    this.readyQueue = db.prepare<[number, number], TaskRow>(`SELECT *, ${PARENTS} FROM tasks
      WHERE status = 'ready' AND (not_before IS NULL OR not_before <= ?)
      ORDER BY priority DESC, seq LIMIT ?`);
    this.runningTasks = db.prepare<[], TaskRow>(
      `SELECT *, ${PARENTS} FROM tasks WHERE status = 'running'`,
    );
  }

  create(task: NewTask, parents: readonly string[]): void {
    this.insert.run({ ...task, origin: JSON.stringify(task.origin) });
    for (const parent of parents) this.insertParent.run(task.id, parent);
  }

  get(id: string): Task | null {
    const row = this.byId.get(id);
    return row ? this.toTask(row) : null;
  }

  list(filter: TaskFilter): { tasks: Task[]; lastSeq: number | null; more: boolean } {
    const key = `${filter.status ? 's' : ''}${filter.assignee !== undefined ? 'a' : ''}${filter.order}`;
    let stmt = this.listStatements.get(key);
    if (!stmt) {
      const where = [filter.order === 'asc' ? 'seq > @afterSeq' : 'seq < @afterSeq'];
      if (filter.status) where.push('status = @status');
      if (filter.assignee !== undefined) where.push('assignee = @assignee');
      stmt = this.db.prepare(
        `SELECT *, ${PARENTS} FROM tasks WHERE ${where.join(' AND ')} ORDER BY seq ${filter.order} LIMIT @limit`,
      );
      this.listStatements.set(key, stmt);
    }
    const start = filter.afterSeq ?? (filter.order === 'asc' ? 0 : Number.MAX_SAFE_INTEGER);
    const rows = stmt.all({ ...filter, afterSeq: start, limit: filter.limit + 1 }) as TaskRow[];
    const more = rows.length > filter.limit;
    const page = rows.slice(0, filter.limit);
    return { tasks: page.map((r) => this.toTask(r)), lastSeq: page.at(-1)?.seq ?? null, more };
  }

  children(id: string): string[] {
    return this.childrenOf.all(id).map((r) => r.task_id);
  }

  /**
   * Compare-and-set: writes `set` only if the task is still in `status` with `runId` as its
   * current run (and, when given, `terminating` as its pending termination). True if it won.
   */
  cas(
    id: string,
    expect: {
      status: TaskStatus | readonly TaskStatus[];
      runId?: string | null;
      terminating?: string | null;
    },
    set: TaskColumns,
  ): boolean {
    const statuses = typeof expect.status === 'string' ? [expect.status] : expect.status;
    const columns = Object.keys(set).sort();
    const key = `${statuses.length}|${'runId' in expect}|${'terminating' in expect}|${columns.join(',')}`;
    let stmt = this.casStatements.get(key);
    if (!stmt) {
      const where = [`id = @id`, `status IN (${statuses.map((_, i) => `@s${i}`).join(', ')})`];
      if ('runId' in expect) where.push('current_run_id IS @runId');
      if ('terminating' in expect) where.push('terminating IS @terminating');
      const assignments = columns.map((c) => `${c} = @set_${c}`).join(', ');
      stmt = this.db.prepare(`UPDATE tasks SET ${assignments} WHERE ${where.join(' AND ')}`);
      this.casStatements.set(key, stmt);
    }
    const params: Record<string, unknown> = {
      id,
      runId: expect.runId ?? null,
      terminating: expect.terminating ?? null,
    };
    statuses.forEach((s, i) => (params[`s${i}`] = s));
    for (const c of columns) params[`set_${c}`] = set[c as keyof TaskColumns];
    return stmt.run(params).changes === 1;
  }

  delete(id: string): boolean {
    return this.remove.run(id).changes === 1;
  }

  addComment(taskId: string, author: string, text: string, at: number): Comment {
    const info = this.insertComment.run(taskId, author, text, at);
    return { id: Number(info.lastInsertRowid), taskId, author, text, at };
  }

  counts(): Record<TaskStatus, number> {
    const counts = { todo: 0, ready: 0, running: 0, blocked: 0, done: 0, archived: 0 };
    for (const { status, n } of this.countByStatus.all()) counts[status] = n;
    return counts;
  }

  /** Ready tasks whose cooldown has passed, highest priority first, then oldest. */
  dispatchable(now: number, limit: number): Task[] {
    return this.readyQueue.all(now, limit).map((r) => this.toTask(r));
  }

  running(): (Task & TaskLease)[] {
    return this.runningTasks.all().map((r) => ({
      ...this.toTask(r),
      leaseExpiresAt: r.lease_expires_at,
      lastHeartbeatAt: r.last_heartbeat_at,
      terminating: r.terminating,
    }));
  }

  private toTask(row: TaskRow): Task {
    return {
      id: row.id,
      title: row.title,
      body: row.body,
      assignee: row.assignee,
      status: row.status,
      priority: row.priority,
      parents: JSON.parse(row.parents) as string[],
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      startedAt: row.started_at,
      completedAt: row.completed_at,
      maxRuntimeSeconds: row.max_runtime_seconds,
      maxRetries: row.max_retries,
      consecutiveFailures: row.consecutive_failures,
      lastFailureError: row.last_failure_error,
      result: row.result === null ? null : (JSON.parse(row.result) as unknown),
      summary: row.summary,
      currentRunId: row.current_run_id,
      blockReason: row.block_reason,
      notBefore: row.not_before,
      origin: JSON.parse(row.origin) as Origin,
    };
  }
}
