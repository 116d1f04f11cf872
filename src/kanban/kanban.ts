// Assembles the board's services from the configuration and an open database.
import type { Config } from '../config/schema.js';
import { Board, type Clock } from './board.js';
import type { Db } from './db.js';
import { OperatorActions } from './operator-actions.js';
import type { SettlementPolicy } from './run-settlement.js';
import { Terminations, groupTerminator, type RunTerminator } from './run-termination.js';
import { WorkerActions } from './worker-actions.js';

export interface Kanban {
  board: Board;
  operator: OperatorActions;
  worker: WorkerActions;
  terminations: Terminations;
  policy: SettlementPolicy;
}

export interface KanbanOptions {
  clock?: Clock;
  /** Replaces process-group termination (tests inject one that reports a survivor). */
  terminator?: RunTerminator;
  onListenerError: (err: unknown) => void;
}

export function createKanban(config: Config, db: Db, opts: KanbanOptions): Kanban {
  const board = new Board(db, opts.clock ?? Date.now, opts.onListenerError);
  const policy: SettlementPolicy = {
    failureLimit: config.workers.failureLimit,
    rateLimitCooldownMs: config.workers.rateLimitCooldownSeconds * 1000,
  };
  const terminator =
    opts.terminator ??
    groupTerminator({ graceMs: config.workers.killGraceSeconds * 1000, killWaitMs: 5000 });
  const terminations = new Terminations(
    board,
    { ...policy, reclaimDeferMs: config.workers.reclaimDeferSeconds * 1000 },
    terminator,
  );
  return {
    board,
    operator: new OperatorActions(board, terminations),
    worker: new WorkerActions(board, policy),
    terminations,
    policy,
  };
}
