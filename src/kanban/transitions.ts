// The task state machine as one pure table: which move takes which status where (SPEC §5).
import type { TaskStatus } from './types.js';

export type TaskMove =
  'promote' | 'claim' | 'complete' | 'block' | 'release' | 'give_up' | 'unblock' | 'archive';

export interface MoveContext {
  /** Every parent is done (decides `unblock` → ready or todo). */
  parentsDone: boolean;
}

const ALL_BUT_ARCHIVED: TaskStatus[] = ['todo', 'ready', 'running', 'blocked', 'done'];

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
