// The task state machine as one pure table: which move takes which status where (docs/api.md), and
// which columns each status implies, so no move can leave a lease on a done task.
import type { BlockKind } from './asks.js';
import type { TaskStatus } from './types.js';

export type TaskMove =
  | 'promote'
  | 'claim'
  | 'complete'
  | 'block'
  | 'release'
  | 'give_up'
  | 'unblock'
  | 'archive'
  | 'orphan'
  | 'follow_up'
  | 'submit'
  | 'approve'
  | 'request_changes'
  | 'pr_done'
  | 'pr_block'
  | 'pr_reopen'
  | 'await_approval'
  | 'budget_block'
  | 'await_attempts'
  | 'attempts_review';

export interface MoveContext {
  /** Every parent is done (decides `unblock` → ready or todo). */
  parentsDone: boolean;
}

const ALL_BUT_ARCHIVED: TaskStatus[] = ['todo', 'ready', 'running', 'review', 'blocked', 'done'];

export const MOVES: Record<
  TaskMove,
  { from: readonly TaskStatus[]; to: (ctx: MoveContext) => TaskStatus }
> = {
  promote: { from: ['todo'], to: () => 'ready' },
  claim: { from: ['ready'], to: () => 'running' },
  complete: { from: ['running'], to: () => 'done' },
  block: { from: ['running'], to: () => 'blocked' },
  release: { from: ['running'], to: () => 'ready' },
  give_up: { from: ['running', 'ready'], to: () => 'blocked' },
  unblock: { from: ['blocked'], to: (ctx) => (ctx.parentsDone ? 'ready' : 'todo') },
  archive: { from: ALL_BUT_ARCHIVED, to: () => 'archived' },
  /** A parent was archived before it was done: the child cannot become ready by itself. */
  orphan: { from: ['todo'], to: () => 'blocked' },
  /** More to do on a finished or blocked task (docs/workers.md): it runs again, in its workspace. */
  follow_up: {
    from: ['done', 'blocked', 'review'],
    to: (ctx) => (ctx.parentsDone ? 'ready' : 'todo'),
  },
  /** A completed run of a task under review waits for a person (docs/workers.md). */
  submit: { from: ['running'], to: () => 'review' },
  approve: { from: ['review'], to: () => 'done' },
  /** Sent back with what to change: it runs again, its workspace and session kept. */
  request_changes: { from: ['review'], to: (ctx) => (ctx.parentsDone ? 'ready' : 'todo') },
  /**
   * Its pull request was merged (a person may merge at any time), its branch had nothing to
   * propose, or its checks passed (docs/pull-requests.md). A running task waits for its run.
   */
  pr_done: { from: ['review', 'blocked', 'ready', 'todo'], to: () => 'done' },
  /** Its pull request was closed, its feedback rounds ran out, or its push was refused. */
  pr_block: { from: ['review', 'ready', 'todo'], to: () => 'blocked' },
  /** Its closed pull request was reopened. */
  pr_reopen: { from: ['blocked'], to: () => 'review' },
  /** Edited after its approval, before its first run: the new revision waits for a person. */
  await_approval: { from: ['ready'], to: () => 'todo' },
  /** At or over its budget (docs/budgets.md): not started, blocked until a person raises it. */
  budget_block: { from: ['ready'], to: () => 'blocked' },
  /** Given to attempts (docs/attempts.md): it waits in todo while they run. */
  await_attempts: { from: ['todo', 'ready'], to: () => 'todo' },
  /** Its attempts have ended (and were judged): a person, or the judge, picks one. */
  attempts_review: { from: ['todo'], to: () => 'review' },
};

/** The status a move leads to from `from`, or null when the move is not allowed there. */
export function transition(from: TaskStatus, move: TaskMove, ctx: MoveContext): TaskStatus | null {
  const rule = MOVES[move];
  return rule.from.includes(from) ? rule.to(ctx) : null;
}

/** A new task waits in todo while any parent is not done. */
export function initialStatus(ctx: MoveContext): TaskStatus {
  return ctx.parentsDone ? 'ready' : 'todo';
}

/** Only archived tasks may be deleted. */
export function canDelete(status: TaskStatus): boolean {
  return status === 'archived';
}

/** What only some statuses carry: a run and its lease (running), a cooldown (ready), a reason (blocked). */
export type StatusFacts =
  | { status: 'running'; runId: string; leaseExpiresAt: number }
  | { status: 'ready'; notBefore: number | null }
  | { status: 'blocked'; reason: string; kind?: BlockKind }
  | { status: 'todo' | 'review' | 'done' | 'archived' };

/** The columns a status implies, by their SQL names: every status move writes all of them. */
export interface StatusColumns {
  status: TaskStatus;
  current_run_id: string | null;
  lease_expires_at: number | null;
  last_heartbeat_at: number | null;
  terminating: string | null;
  not_before: number | null;
  block_reason: string | null;
  block_kind: BlockKind | null;
}

export function columnsFor(facts: StatusFacts): StatusColumns {
  return {
    status: facts.status,
    current_run_id: facts.status === 'running' ? facts.runId : null,
    lease_expires_at: facts.status === 'running' ? facts.leaseExpiresAt : null,
    last_heartbeat_at: null,
    terminating: null,
    not_before: facts.status === 'ready' ? facts.notBefore : null,
    block_reason: facts.status === 'blocked' ? facts.reason : null,
    block_kind: facts.status === 'blocked' ? (facts.kind ?? null) : null,
  };
}

/** A parent lets its children run once it is done, and still after it is archived from done. */
export function parentSatisfied(
  parent: { status: TaskStatus; completedAt: number | null } | null,
): boolean {
  return (
    parent !== null &&
    (parent.status === 'done' || (parent.status === 'archived' && parent.completedAt !== null))
  );
}
