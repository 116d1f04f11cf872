// Assembles the board's services from the configuration and an open store.
import { systemClock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { ApprovalRules } from './approval-rules.js';
import { RunTokens } from '../mcp/run-token.js';
import { Board } from './board.js';
import { Ownership } from './hosts/ownership.js';
import { Launching } from './dispatch/launching.js';
import { runTerminator, type RunTerminator } from './dispatch/run-terminator.js';
import { TaskWorkspaces } from './dispatch/task-workspaces.js';
import type { DispatcherLog } from './dispatch/log.js';
import { Terminations } from './dispatch/terminations.js';
import { printedAgent } from './dispatch/agent-runs.js';
import { runDir } from './dispatch/run-files.js';
import type { SettlementPolicy } from './moves/settle.js';
import type { Clock } from './moves/tx.js';
import { OperatorActions } from './operator-actions.js';
import type { BoardStore } from './store/contract.js';
import { WorkerActions } from './worker-actions.js';

export interface Kanban {
  board: Board;
  operator: OperatorActions;
  worker: WorkerActions;
  terminations: Terminations;
  terminator: RunTerminator;
  /** Runs being launched: every termination waits for their spawn (launching.ts). */
  launching: Launching;
  policy: SettlementPolicy;
  /** Which runs this daemon supervises (all of them unless the board is shared). */
  ownership: Ownership;
  /** Tasks' workspaces (docs/workspaces.md). */
  workspaces: TaskWorkspaces;
  /** Whose approval a task's first run waits for (docs/mcp.md). */
  approvals: ApprovalRules;
  /** Each run's own MCP token (docs/mcp.md). */
  runTokens: RunTokens;
}

export interface KanbanOptions {
  clock?: Clock;
  /** Replaces process termination (tests inject one that reports a survivor). */
  terminator?: RunTerminator;
  onListenerError: (err: unknown) => void;
  log: DispatcherLog;
  /** How long a keyed request waits for its twin (default 10 s; tests make it short). */
  keyedWaitMs?: number;
}

export function createKanban(config: Config, store: BoardStore, opts: KanbanOptions): Kanban {
  const board = new Board(store, opts.clock ?? systemClock, opts.onListenerError, opts.keyedWaitMs);
  const policy: SettlementPolicy = {
    failureLimit: config.workers.failureLimit,
    rateLimitCooldownMs: config.workers.rateLimitCooldownSeconds * 1000,
    reviewProfiles: new Set(
      Object.values(config.workers.profiles)
        .filter((p) => p.review)
        .map((p) => p.name),
    ),
    prRepos: new Set(
      Object.values(config.workspaces.repos)
        .filter((r) => r.pr !== null)
        .map((r) => r.name),
    ),
  };
  const launching = new Launching();
  const workspaces = new TaskWorkspaces(board, config, opts.log);
  const guarded = launching.guard(
    opts.terminator ??
      runTerminator({ graceMs: config.workers.killGraceSeconds * 1000, killWaitMs: 5000 }),
    (runId) => board.runs.get(runId),
  );
  // A run ended while its workspace's setup runs: the setup ends with it.
  const terminator: RunTerminator = (run, groupHeldUntil) => {
    workspaces.room.stopSetup(run.taskId, 'its run was ended');
    return guarded(run, groupHeldUntil);
  };
  const terminations = new Terminations(
    board,
    { ...policy, reclaimDeferMs: config.workers.reclaimDeferSeconds * 1000 },
    terminator,
    config.dataDir,
    (run) => {
      const agent = config.workers.profiles[run.profile]?.agent;
      return agent ? printedAgent(runDir(config.dataDir, run.id), agent) : null;
    },
  );
  const ownership = new Ownership(board.shared, config.dataDir);
  return {
    board,
    operator: new OperatorActions(
      board,
      terminations,
      config.dataDir,
      ownership,
      // Its tick, its kill grace and the wait for the group to go, with room to spare; within
      // the request's own time limit.
      Math.max(
        1,
        Math.min(
          config.workers.tickSeconds + config.workers.killGraceSeconds + 10,
          config.server.requestTimeoutSeconds - 1,
        ),
      ) * 1000,
    ),
    ownership,
    worker: new WorkerActions(board, policy, (run) => workspaces.judge(run)),
    workspaces,
    approvals: new ApprovalRules(config),
    runTokens: new RunTokens(config.dataDir),
    terminations,
    terminator,
    launching,
    policy,
  };
}
