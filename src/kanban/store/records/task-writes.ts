// What a move writes to a task, on either engine: the new task, the column sets, the
// compare-and-set condition, and the key a transaction carries its writer under. Only the moves
// (and the engines) may import this module (eslint no-restricted-imports).
import type { StatusColumns } from '../../model/transitions.js';
import type { TaskApproval } from '../../model/asks.js';
import type { Budget } from '../../model/budget.js';
import type { Origin, Task, TaskStatus } from '../../model/types.js';

/** The key under which a transaction carries its writer; importing it is what the lint rule guards. */
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
  /** Its completed runs wait in review (docs/api.md, review); null: as its profile says. */
  review: boolean | null;
  /** Its first run waits for a person's approval (docs/mcp.md), or null. */
  approval: TaskApproval | null;
  /** Its own budget (docs/budgets.md), or null: its profile's. */
  budget: Budget | null;
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
  /** The task's workspace (JSON of a WorkspaceRecord), docs/workspaces.md. */
  workspace?: string | null;
  instructions?: string | null;
  /** Its pull request (JSON of a TaskPr) and how it is followed (JSON of a PrSync). */
  pr?: string | null;
  pr_sync?: string | null;
  /** JSON of a TaskQuestion, a TaskProgress and a TaskApproval (docs/mcp.md). */
  question?: string | null;
  progress?: string | null;
  approval?: string | null;
  /** JSON of a Budget (docs/budgets.md). */
  budget?: string | null;
  /** Best of N (docs/attempts.md): the task it is an attempt of, its attempts, its judge's say. */
  attempt_of?: string | null;
  attempts?: string | null;
  judge?: string | null;
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

/** The only writes of tasks: every change of tasks.status goes through one of these. */
export interface TaskWriter {
  /** Inserts the task and its links to its parents; the task as it was written. */
  create(task: NewTask, status: 'ready' | 'todo', parents: readonly string[]): Promise<Task>;
  unlinkParent(taskId: string, parentId: string): Promise<void>;
  /** Moves the task to a new status with every column that status implies. True if it won. */
  move(id: string, expect: Expect, to: StatusColumns, details: DetailColumns): Promise<boolean>;
  /** Changes a task without changing its status. True if it won. */
  change(id: string, expect: Expect, set: DetailColumns | RunningColumns): Promise<boolean>;
  /**
   * Takes the ready task's row for a claim: the task, or null when it is not ready or another
   * host is writing it (PostgreSQL skips a locked row; a SQLite writer is alone).
   */
  lockReady(id: string): Promise<Task | null>;
  delete(id: string): Promise<boolean>;
  addComment(taskId: string, author: string, text: string, at: number): Promise<number>;
}
