// A task as both engines read it: one list of its columns, from which the SELECT list, each
// column's place in a row and the mapping to a Task are all derived.
import type { WorkspaceRecord } from '../../../workspaces/types.js';
import {
  awaitingOf,
  type BlockKind,
  type TaskApproval,
  type TaskProgress,
  type TaskQuestion,
} from '../../model/asks.js';
import type { Budget } from '../../model/budget.js';
import type { AttemptGroup, JudgeResult } from '../../model/attempts.js';
import type { PrSync, TaskPr } from '../../model/pull-request.js';
import type { Origin, Task, TaskStatus } from '../../model/types.js';
import type { RunRecord } from './run.js';

/** Each column of a task row and what an engine hands back for it. */
interface TaskColumnTypes {
  id: string;
  title: string;
  body: string;
  assignee: string | null;
  status: TaskStatus;
  priority: number;
  /** Its parent ids in link order, as a JSON array (an expression each engine supplies). */
  parents: string;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  completed_at: number | null;
  max_runtime_seconds: number | null;
  max_retries: number | null;
  consecutive_failures: number;
  last_failure_error: string | null;
  /** JSON. */
  result: string | null;
  summary: string | null;
  current_run_id: string | null;
  block_reason: string | null;
  not_before: number | null;
  /** JSON of an Origin. */
  origin: string;
  seq: number;
  lease_expires_at: number | null;
  last_heartbeat_at: number | null;
  terminating: string | null;
  /** JSON of a WorkspaceRecord. */
  workspace: string | null;
  repo: string | null;
  instructions: string | null;
  model: string | null;
  /** 0 or 1 on SQLite, a boolean on PostgreSQL. */
  review: number | boolean | null;
  /** JSON of a TaskPr. */
  pr: string | null;
  /** JSON of a PrSync: set while the PR is followed. */
  pr_sync: string | null;
  block_kind: BlockKind | null;
  /** JSON of a TaskQuestion. */
  question: string | null;
  /** JSON of a TaskProgress. */
  progress: string | null;
  /** JSON of a TaskApproval. */
  approval: string | null;
  /** JSON of a Budget. */
  budget: string | null;
  attempt_of: string | null;
  /** JSON of an AttemptGroup. */
  attempts: string | null;
  /** JSON of a JudgeResult. */
  judge: string | null;
}

type TaskColumn = keyof TaskColumnTypes;

/**
 * The columns every task read returns, in this order. Rows come back as arrays (raw mode):
 * building an object keyed by column names for every row cost twice the read itself.
 */
const COLUMNS = [
  'id',
  'title',
  'body',
  'assignee',
  'status',
  'priority',
  'parents',
  'created_at',
  'updated_at',
  'started_at',
  'completed_at',
  'max_runtime_seconds',
  'max_retries',
  'consecutive_failures',
  'last_failure_error',
  'result',
  'summary',
  'current_run_id',
  'block_reason',
  'not_before',
  'origin',
  'seq',
  'lease_expires_at',
  'last_heartbeat_at',
  'terminating',
  'workspace',
  'repo',
  'instructions',
  'model',
  'review',
  'pr',
  'pr_sync',
  'block_kind',
  'question',
  'progress',
  'approval',
  'budget',
  'attempt_of',
  'attempts',
  'judge',
] as const satisfies readonly TaskColumn[];

// A column added to TaskColumnTypes but not to COLUMNS fails to compile here.
const everyColumnListed: Exclude<TaskColumn, (typeof COLUMNS)[number]> extends never
  ? true
  : never = true;
void everyColumnListed;

/** A task row as read with taskColumns: one value per column, in COLUMNS' order. */
export type TaskRow = unknown[];

/** Where each column is in a row. */
const AT = Object.fromEntries(COLUMNS.map((c, i) => [c, i])) as Record<TaskColumn, number>;

/** The value of one column of a row. */
export function taskColumn<K extends TaskColumn>(row: TaskRow, column: K): TaskColumnTypes[K] {
  return row[AT[column]] as TaskColumnTypes[K];
}

/** How many values a task row has: what an engine reads after them (extra columns) starts here. */
export const TASK_ROW_LENGTH = COLUMNS.length;

/**
 * The SELECT list of a task read; `parents` is the engine's expression giving the parent ids
 * (in link order) as a JSON array, read in the same statement.
 */
export function taskColumns(parents: string): string {
  return COLUMNS.map((c) => (c === 'parents' ? `${parents} AS parents` : c)).join(', ');
}

/** The schedule firing a task's origin names, or null. */
export function scheduleOf(origin: Origin): Task['schedule'] {
  return origin.kind === 'schedule' ? { name: origin.name, fireTime: origin.fireTime } : null;
}

/** A task from a row read with taskColumns, on either engine. */
export function toTask(row: TaskRow): Task {
  const json = <T>(text: string | null): T | null =>
    text === null ? null : (JSON.parse(text) as T);
  const review = taskColumn(row, 'review');
  const origin = JSON.parse(taskColumn(row, 'origin')) as Origin;
  return {
    id: taskColumn(row, 'id'),
    title: taskColumn(row, 'title'),
    body: taskColumn(row, 'body'),
    assignee: taskColumn(row, 'assignee'),
    status: taskColumn(row, 'status'),
    priority: taskColumn(row, 'priority'),
    parents: JSON.parse(taskColumn(row, 'parents')) as string[],
    createdAt: taskColumn(row, 'created_at'),
    updatedAt: taskColumn(row, 'updated_at'),
    startedAt: taskColumn(row, 'started_at'),
    completedAt: taskColumn(row, 'completed_at'),
    maxRuntimeSeconds: taskColumn(row, 'max_runtime_seconds'),
    maxRetries: taskColumn(row, 'max_retries'),
    consecutiveFailures: taskColumn(row, 'consecutive_failures'),
    lastFailureError: taskColumn(row, 'last_failure_error'),
    result: json<unknown>(taskColumn(row, 'result')),
    summary: taskColumn(row, 'summary'),
    currentRunId: taskColumn(row, 'current_run_id'),
    blockReason: taskColumn(row, 'block_reason'),
    notBefore: taskColumn(row, 'not_before'),
    origin,
    schedule: scheduleOf(origin),
    workspace: json<WorkspaceRecord>(taskColumn(row, 'workspace')),
    repo: taskColumn(row, 'repo'),
    instructions: taskColumn(row, 'instructions'),
    model: taskColumn(row, 'model'),
    review: review === null ? null : review === 1 || review === true,
    pr: json<TaskPr>(taskColumn(row, 'pr')),
    blockKind: taskColumn(row, 'block_kind'),
    question: json<TaskQuestion>(taskColumn(row, 'question')),
    progress: json<TaskProgress>(taskColumn(row, 'progress')),
    approval: json<TaskApproval>(taskColumn(row, 'approval')),
    budget: json<Budget>(taskColumn(row, 'budget')),
    attemptOf: taskColumn(row, 'attempt_of'),
    attempts: json<AttemptGroup>(taskColumn(row, 'attempts')),
    judge: json<JudgeResult>(taskColumn(row, 'judge')),
    awaiting: awaitingOf(
      taskColumn(row, 'status'),
      json<TaskApproval>(taskColumn(row, 'approval')),
      json<AttemptGroup>(taskColumn(row, 'attempts')),
    ),
  };
}

/** A task with its pull request's sync state, from a row read with taskColumns. */
export function toPrWork(row: TaskRow): PrWork {
  return { task: toTask(row), sync: JSON.parse(taskColumn(row, 'pr_sync')!) as PrSync };
}

/** A task whose pull request is followed, and how. */
export interface PrWork {
  task: Task;
  sync: PrSync;
}

/** A running task with its lease, from a row read with taskColumns. */
export function toRunningTask(row: TaskRow): Task & TaskLease {
  return {
    ...toTask(row),
    leaseExpiresAt: taskColumn(row, 'lease_expires_at'),
    lastHeartbeatAt: taskColumn(row, 'last_heartbeat_at'),
    terminating: taskColumn(row, 'terminating'),
  };
}

/** A task as GET /tasks/:id shows it: its runs, oldest first, and the tasks that wait on it. */
export interface TaskDetail {
  task: Task;
  runs: RunRecord[];
  children: string[];
}

/** Dispatcher-only facts that the API does not show. */
export interface TaskLease {
  leaseExpiresAt: number | null;
  lastHeartbeatAt: number | null;
  terminating: string | null;
}

/** A running task as the dispatcher's clock sees it. */
export interface RunningDeadline extends TaskLease {
  id: string;
  currentRunId: string | null;
  maxRuntimeSeconds: number | null;
}

/** Which tasks: by assignee, and by a search in the title (any case) or the exact id. */
export interface TaskMatch {
  assignee?: string | undefined;
  q?: string | undefined;
}

export interface TaskFilter extends TaskMatch {
  status?: TaskStatus | undefined;
  /** Oldest first (asc, the default) or newest first (desc). */
  order: 'asc' | 'desc';
  /** Continue after this seq (in the chosen order); null from the start. */
  afterSeq: number | null;
  limit: number;
}

/** A page of tasks and where the next one starts. */
export interface TaskPage {
  tasks: Task[];
  lastSeq: number | null;
  more: boolean;
}

/** A page of rows: its tasks and the seq of its last row, for the next page's cursor. */
export function taskPage(found: TaskRow[], limit: number): TaskPage {
  const page = found.slice(0, limit);
  const last = page.at(-1);
  return {
    tasks: page.map(toTask),
    lastSeq: last ? taskColumn(last, 'seq') : null,
    more: found.length > limit,
  };
}
