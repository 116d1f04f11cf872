// Reading tasks and their parent links; every statement prepared once. Writes are in task-writes.ts.
import type { PrSync } from '../../model/pull-request.js';
import { noTasks, type Comment, type Task, type TaskStatus } from '../../model/types.js';
import type { TaskReads } from '../contract.js';
import { toRecord, type RunRow } from '../records/run.js';
import {
  TASK_ROW_LENGTH,
  taskColumns,
  taskPage,
  toPrWork,
  toRunningTask,
  toTask,
  type PrWork,
  type RunningDeadline,
  type TaskDetail,
  type TaskFilter,
  type TaskLease,
  type TaskMatch,
  type TaskPage,
  type TaskRow,
} from '../records/task.js';
import type { Db } from './db.js';
import { runsOfTaskAsJson } from './run-store.js';

/** Every column of a task, its parents included, as toTask reads them. */
export const TASK_COLUMNS = taskColumns(
  '(SELECT json_group_array(parent_id) FROM (SELECT parent_id FROM task_parents WHERE task_id = tasks.id ORDER BY rowid))',
);

/** A search: the exact id, or the text anywhere in the title, in any case (ASCII). */
const SEARCH = '(id = @q OR instr(lower(title), lower(@q)) > 0)';

/** A ready task's place in the dispatch queue. */
interface QueuedTask {
  id: string;
  priority: number;
  seq: number;
}

export class TaskStore implements TaskReads {
  private readonly byId;
  private readonly detailOf;
  private readonly childrenOf;
  private readonly countByStatus;
  private readonly readyQueue;
  private readonly unassignedQueue;
  private readonly strandedQueue;
  private readonly runningTasks;
  private readonly runningDeadlineRows;
  private readonly openTasks;
  private readonly pendingTermination;
  private readonly toRetire;
  private readonly recentComments;
  private readonly followedPrs;
  private readonly syncOf;
  private readonly filterStatements = new Map<string, ReturnType<Db['prepare']>>();

  constructor(private readonly db: Db) {
    this.byId = db
      .prepare<[string], TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ?`)
      .raw(true);
    // The task, its runs and the tasks waiting on it in one statement: three statements cost
    // half as much again, each starting its own read of the database.
    this.detailOf = db
      .prepare<[string], TaskRow>(
        `SELECT ${TASK_COLUMNS}, ${runsOfTaskAsJson(db)},
          (SELECT json_group_array(task_id) FROM task_parents WHERE parent_id = tasks.id)
        FROM tasks WHERE id = ?`,
      )
      .raw(true);
    this.toRetire = db.prepare<[number, number], { id: string }>(
      `SELECT id FROM tasks WHERE workspace IS NOT NULL AND json_extract(workspace, '$.state') = 'active'
        AND (status = 'archived' OR (status = 'done' AND completed_at < ?)) ORDER BY updated_at LIMIT ?`,
    );
    this.recentComments = db.prepare<[string, number, number], Comment>(
      `SELECT * FROM (SELECT id, task_id AS taskId, author, text, at FROM comments
        WHERE task_id = ? AND at >= ? ORDER BY id DESC LIMIT ?) ORDER BY id`,
    );
    this.childrenOf = db.prepare<[string], { task_id: string }>(
      'SELECT task_id FROM task_parents WHERE parent_id = ?',
    );
    this.countByStatus = db.prepare<[], { status: TaskStatus; n: number }>(
      'SELECT status, count(*) AS n FROM tasks GROUP BY status',
    );
    // Each walks the dispatch index in order and stops at the limit: no sort of the whole queue.
    const ready = (assignee: string) =>
      db.prepare<[{ now: number; profile: string; limit: number }], QueuedTask>(
        `SELECT id, priority, seq FROM tasks
          WHERE status = 'ready' AND ${assignee} AND (not_before IS NULL OR not_before <= @now)
          ORDER BY priority DESC, seq LIMIT @limit`,
      );
    this.readyQueue = ready('assignee = @profile');
    this.unassignedQueue = ready('assignee IS NULL AND @profile IS NOT NULL');
    this.strandedQueue = db.prepare<[string], { id: string; assignee: string }>(
      `SELECT id, assignee FROM tasks WHERE status = 'ready' AND assignee IS NOT NULL
        AND assignee NOT IN (SELECT value FROM json_each(?)) LIMIT 100`,
    );
    this.pendingTermination = db.prepare<[string], { terminating: string | null }>(
      'SELECT terminating FROM tasks WHERE id = ?',
    );
    this.openTasks = db
      .prepare<[number], TaskRow>(
        `SELECT ${TASK_COLUMNS} FROM tasks WHERE status IN ('todo', 'ready', 'running', 'review', 'blocked') ORDER BY seq LIMIT ?`,
      )
      .raw(true);
    this.runningTasks = db
      .prepare<[], TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE status = 'running'`)
      .raw(true);
    this.followedPrs = db
      .prepare<[number], TaskRow>(
        `SELECT ${TASK_COLUMNS} FROM tasks WHERE pr_sync IS NOT NULL AND status <> 'archived' ORDER BY seq LIMIT ?`,
      )
      .raw(true);
    this.syncOf = db.prepare<[string], { pr_sync: string | null }>(
      'SELECT pr_sync FROM tasks WHERE id = ?',
    );
    this.runningDeadlineRows = db.prepare<[], RunningDeadline>(
      `SELECT id, current_run_id AS currentRunId, max_runtime_seconds AS maxRuntimeSeconds,
        lease_expires_at AS leaseExpiresAt, last_heartbeat_at AS lastHeartbeatAt, terminating
      FROM tasks WHERE status = 'running'`,
    );
  }

  async get(id: string): Promise<Task | null> {
    const row = this.byId.get(id);
    return row ? toTask(row) : null;
  }

  /** The task, its runs and the tasks that wait on it, read together (one snapshot), or null. */
  async detail(id: string): Promise<TaskDetail | null> {
    const row = this.detailOf.get(id);
    if (!row) return null;
    const [runs, children] = row.slice(TASK_ROW_LENGTH) as [string, string];
    return {
      task: toTask(row),
      runs: (JSON.parse(runs) as RunRow[]).map(toRecord),
      children: JSON.parse(children) as string[],
    };
  }

  /** The task's comments written since `since` (the newest `limit`), oldest first. */
  async commentsSince(id: string, since: number, limit: number): Promise<Comment[]> {
    return this.recentComments.all(id, since, limit);
  }

  async list(filter: TaskFilter): Promise<TaskPage> {
    const key = `${filter.status ? 's' : ''}${filter.assignee !== undefined ? 'a' : ''}${filter.q !== undefined ? 'q' : ''}${filter.order}`;
    let stmt = this.filterStatements.get(key);
    if (!stmt) {
      const where = [filter.order === 'asc' ? 'seq > @afterSeq' : 'seq < @afterSeq'];
      if (filter.status) where.push('status = @status');
      if (filter.assignee !== undefined) where.push('assignee = @assignee');
      if (filter.q !== undefined) where.push(SEARCH);
      stmt = this.db
        .prepare(
          `SELECT ${TASK_COLUMNS} FROM tasks WHERE ${where.join(' AND ')} ORDER BY seq ${filter.order} LIMIT @limit`,
        )
        .raw(true);
      this.filterStatements.set(key, stmt);
    }
    const start = filter.afterSeq ?? (filter.order === 'asc' ? 0 : Number.MAX_SAFE_INTEGER);
    const rows = stmt.all({ ...filter, afterSeq: start, limit: filter.limit + 1 }) as TaskRow[];
    return taskPage(rows, filter.limit);
  }

  async children(id: string): Promise<string[]> {
    return this.childrenOf.all(id).map((r) => r.task_id);
  }

  /** Tasks whose workspace is due to go: archived, or done before `doneBefore`. */
  async workspacesToRetire(doneBefore: number, limit: number): Promise<string[]> {
    return this.toRetire.all(doneBefore, limit).map((r) => r.id);
  }

  /** Tasks per status, of those `match` picks (all by default). */
  async counts(match: TaskMatch = {}): Promise<Record<TaskStatus, number>> {
    const counts = noTasks();
    const found =
      match.assignee === undefined && match.q === undefined
        ? this.countByStatus.all()
        : this.countMatching(match);
    for (const { status, n } of found) counts[status] = n;
    return counts;
  }

  private countMatching(match: TaskMatch): { status: TaskStatus; n: number }[] {
    const key = `count${match.assignee !== undefined ? 'a' : ''}${match.q !== undefined ? 'q' : ''}`;
    let stmt = this.filterStatements.get(key);
    if (!stmt) {
      const where = ['1'];
      if (match.assignee !== undefined) where.push('assignee = @assignee');
      if (match.q !== undefined) where.push(SEARCH);
      stmt = this.db.prepare(
        `SELECT status, count(*) AS n FROM tasks WHERE ${where.join(' AND ')} GROUP BY status`,
      );
      this.filterStatements.set(key, stmt);
    }
    return stmt.all({ assignee: match.assignee, q: match.q }) as {
      status: TaskStatus;
      n: number;
    }[];
  }

  /** SQLite has one host: `_host` runs every task. */
  async dispatchable(
    now: number,
    profile: string,
    isDefault: boolean,
    limit: number,
    _host: string,
  ): Promise<string[]> {
    const rows = this.readyQueue.all({ now, profile, limit });
    if (isDefault) {
      rows.push(...this.unassignedQueue.all({ now, profile, limit }));
      rows.sort((a, b) => b.priority - a.priority || a.seq - b.seq).splice(limit);
    }
    return rows.map((r) => r.id);
  }

  /** Ready tasks assigned to a profile that is not configured (any more). */
  async stranded(profiles: readonly string[]): Promise<{ id: string; assignee: string }[]> {
    return this.strandedQueue.all(JSON.stringify(profiles));
  }

  /** The oldest `limit` open tasks (todo, ready, running, blocked) and how many there are. */
  async open(limit: number): Promise<{ tasks: Task[]; total: number }> {
    const c = await this.counts();
    return {
      tasks: this.openTasks.all(limit).map((r) => toTask(r)),
      total: c.todo + c.ready + c.running + c.review + c.blocked,
    };
  }

  /** The termination pending on a running task, or null. */
  async terminatingOf(id: string): Promise<string | null> {
    return this.pendingTermination.get(id)?.terminating ?? null;
  }

  /** What the tick checks of every running task, and nothing else of the row (it runs often). */
  async runningDeadlines(): Promise<RunningDeadline[]> {
    return this.runningDeadlineRows.all();
  }

  async running(): Promise<(Task & TaskLease)[]> {
    return this.runningTasks.all().map(toRunningTask);
  }

  async pullRequests(limit: number): Promise<PrWork[]> {
    return this.followedPrs.all(limit).map(toPrWork);
  }

  async prSync(id: string): Promise<PrSync | null> {
    const text = this.syncOf.get(id)?.pr_sync;
    return text ? (JSON.parse(text) as PrSync) : null;
  }
}
