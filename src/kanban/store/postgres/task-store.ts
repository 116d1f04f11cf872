// Reading tasks on PostgreSQL: the contract's reads, rows in the column order ../records/task.ts
// lists, so both engines build a task with the same code.
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
import { arrays, rows, type Queryable } from './query.js';
import { NOW } from './host-store.js';

/** Every column of a task, its parents included, as toTask reads them. */
export const COLUMNS = taskColumns(
  "(SELECT coalesce(json_agg(parent_id ORDER BY ord), '[]')::text FROM task_parents WHERE task_id = tasks.id)",
);

/**
 * A search: the exact id, or the text anywhere in the title, ASCII letters in any
 * case (SQLite's lower() folds only those; translate() does the same whatever the locale).
 */
const fold = (sql: string) =>
  `translate(${sql}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`;
const search = (n: number) => `(id = $${n} OR strpos(${fold('title')}, ${fold(`$${n}`)}) > 0)`;

export class PgTaskStore implements TaskReads {
  constructor(private readonly db: Queryable) {}

  async get(id: string): Promise<Task | null> {
    const [row] = await arrays<TaskRow>(this.db, `SELECT ${COLUMNS} FROM tasks WHERE id = $1`, [
      id,
    ]);
    return row ? toTask(row) : null;
  }

  async commentsSince(id: string, since: number, limit: number): Promise<Comment[]> {
    const found = await rows<Comment>(
      this.db,
      `SELECT * FROM (SELECT id, task_id AS "taskId", author, text, at FROM comments
        WHERE task_id = $1 AND at >= $2 ORDER BY id DESC LIMIT $3) c ORDER BY id`,
      [id, since, limit],
    );
    return found.map((c) => ({ ...c, id: Number(c.id), at: Number(c.at) }));
  }

  async detail(id: string): Promise<TaskDetail | null> {
    // One statement: one round trip, one snapshot. Every run column is a JSON number, string,
    // boolean or null, as RunRow has it.
    const [row] = await arrays<TaskRow>(
      this.db,
      `SELECT ${COLUMNS},
        (SELECT coalesce(json_agg(r ORDER BY r.seq), '[]')::text FROM runs r WHERE r.task_id = tasks.id),
        (SELECT coalesce(json_agg(p.task_id ORDER BY p.ord), '[]')::text FROM task_parents p WHERE p.parent_id = tasks.id)
        FROM tasks WHERE id = $1`,
      [id],
    );
    if (!row) return null;
    const [runs, children] = row.slice(TASK_ROW_LENGTH) as [string, string];
    return {
      task: toTask(row),
      runs: (JSON.parse(runs) as RunRow[]).map(toRecord),
      children: JSON.parse(children) as string[],
    };
  }

  async list(filter: TaskFilter): Promise<TaskPage> {
    const where = [filter.order === 'asc' ? 'seq > $1' : 'seq < $1'];
    const values: unknown[] = [
      filter.afterSeq ?? (filter.order === 'asc' ? 0 : Number.MAX_SAFE_INTEGER),
      filter.limit + 1,
    ];
    if (filter.status) where.push(`status = $${values.push(filter.status)}`);
    if (filter.assignee !== undefined) where.push(`assignee = $${values.push(filter.assignee)}`);
    if (filter.q !== undefined) where.push(search(values.push(filter.q)));
    const found = await arrays<TaskRow>(
      this.db,
      `SELECT ${COLUMNS} FROM tasks WHERE ${where.join(' AND ')} ORDER BY seq ${filter.order === 'asc' ? 'ASC' : 'DESC'} LIMIT $2`,
      values,
    );
    return taskPage(found, filter.limit);
  }

  async children(id: string): Promise<string[]> {
    const found = await rows<{ task_id: string }>(
      this.db,
      'SELECT task_id FROM task_parents WHERE parent_id = $1 ORDER BY ord',
      [id],
    );
    return found.map((r) => r.task_id);
  }

  async workspacesToRetire(doneBefore: number, limit: number): Promise<string[]> {
    const found = await rows<{ id: string }>(
      this.db,
      `SELECT id FROM tasks WHERE workspace IS NOT NULL AND (workspace::jsonb ->> 'state') = 'active'
        AND (status = 'archived' OR (status = 'done' AND completed_at < $1))
        ORDER BY updated_at LIMIT $2`,
      [doneBefore, limit],
    );
    return found.map((r) => r.id);
  }

  async counts(match: TaskMatch = {}): Promise<Record<TaskStatus, number>> {
    const counts = noTasks();
    const where = ['true'];
    const values: unknown[] = [];
    if (match.assignee !== undefined) where.push(`assignee = $${values.push(match.assignee)}`);
    if (match.q !== undefined) where.push(search(values.push(match.q)));
    const found = await rows<{ status: TaskStatus; n: number }>(
      this.db,
      `SELECT status, count(*)::integer AS n FROM tasks WHERE ${where.join(' AND ')} GROUP BY status`,
      values,
    );
    for (const { status, n } of found) counts[status] = n;
    return counts;
  }

  async dispatchable(
    now: number,
    profile: string,
    isDefault: boolean,
    limit: number,
    host: string,
  ): Promise<string[]> {
    // A task's workspace lives on the host that made it: its later runs are that host's while
    // the host's lease is live (docs/workspaces.md); once it is not, any host makes the workspace anew.
    const found = await rows<{ id: string }>(
      this.db,
      `SELECT id FROM tasks
        WHERE status = 'ready' AND (assignee = $2 OR ($3 AND assignee IS NULL))
          AND (not_before IS NULL OR not_before <= $1)
          AND (workspace IS NULL OR (workspace::jsonb ->> 'state') <> 'active'
            OR (workspace::jsonb ->> 'host') = $5
            OR NOT EXISTS (SELECT 1 FROM hosts h WHERE h.name = (tasks.workspace::jsonb ->> 'host')
              AND h.state = 'active' AND h.lease_expires_at > ${NOW}))
        ORDER BY priority DESC, seq LIMIT $4`,
      [now, profile, isDefault, limit, host],
    );
    return found.map((r) => r.id);
  }

  async stranded(profiles: readonly string[]): Promise<{ id: string; assignee: string }[]> {
    return rows(
      this.db,
      `SELECT id, assignee FROM tasks WHERE status = 'ready' AND assignee IS NOT NULL
        AND NOT (assignee = ANY($1::text[])) LIMIT 100`,
      [profiles],
    );
  }

  async open(limit: number): Promise<{ tasks: Task[]; total: number }> {
    const c = await this.counts();
    const found = await arrays<TaskRow>(
      this.db,
      `SELECT ${COLUMNS} FROM tasks WHERE status IN ('todo', 'ready', 'running', 'review', 'blocked') ORDER BY seq LIMIT $1`,
      [limit],
    );
    return { tasks: found.map(toTask), total: c.todo + c.ready + c.running + c.review + c.blocked };
  }

  async terminatingOf(id: string): Promise<string | null> {
    const [row] = await rows<{ terminating: string | null }>(
      this.db,
      'SELECT terminating FROM tasks WHERE id = $1',
      [id],
    );
    return row?.terminating ?? null;
  }

  async runningDeadlines(): Promise<RunningDeadline[]> {
    return rows<RunningDeadline>(
      this.db,
      `SELECT id, current_run_id AS "currentRunId", max_runtime_seconds AS "maxRuntimeSeconds",
        lease_expires_at AS "leaseExpiresAt", last_heartbeat_at AS "lastHeartbeatAt", terminating
      FROM tasks WHERE status = 'running'`,
    );
  }

  async running(): Promise<(Task & TaskLease)[]> {
    const found = await arrays<TaskRow>(
      this.db,
      `SELECT ${COLUMNS} FROM tasks WHERE status = 'running'`,
    );
    return found.map(toRunningTask);
  }

  async pullRequests(limit: number): Promise<PrWork[]> {
    const found = await arrays<TaskRow>(
      this.db,
      `SELECT ${COLUMNS} FROM tasks WHERE pr_sync IS NOT NULL AND status <> 'archived' ORDER BY seq LIMIT $1`,
      [limit],
    );
    return found.map(toPrWork);
  }

  async prSync(id: string): Promise<PrSync | null> {
    const [row] = await rows<{ pr_sync: string | null }>(
      this.db,
      'SELECT pr_sync FROM tasks WHERE id = $1',
      [id],
    );
    return row?.pr_sync ? (JSON.parse(row.pr_sync) as PrSync) : null;
  }
}
