// Ending a run: close it, move its task by the outcome policy, write the events, in one transaction.
import type { Board, Emit } from './board.js';
import { decideOutcome } from './outcome-policy.js';
import type { TaskColumns } from './task-store.js';
import { transition } from './transitions.js';
import type { RunOutcome, Task } from './types.js';

export interface RunEnding {
  taskId: string;
  runId: string;
  outcome: RunOutcome;
  /** The pending termination this settles (null: none may be pending). */
  terminating?: string | null;
  exitCode?: number | null;
  signal?: string | null;
  error?: string | null;
  summary?: string | null;
  result?: unknown;
  blockReason?: string | null;
  /** Extra fields for the outcome's event (e.g. the termination report). */
  payload?: Record<string, unknown>;
  procGone?: boolean;
}

export interface SettlementPolicy {
  failureLimit: number;
  rateLimitCooldownMs: number;
}

/**
 * Settles a running task's current run inside the caller's transaction. Returns the updated
 * task, or null when the task is no longer running that run (someone else settled it first).
 */
export function settleRun(
  board: Board,
  policy: SettlementPolicy,
  ending: RunEnding,
  emit: Emit,
  now: number,
): Task | null {
  const task = board.tasks.get(ending.taskId);
  if (!task || task.status !== 'running' || task.currentRunId !== ending.runId) return null;
  const decision = decideOutcome(ending.outcome, {
    failures: task.consecutiveFailures,
    limit: task.maxRetries ?? policy.failureLimit,
    exitCode: ending.exitCode ?? null,
    now,
    rateLimitCooldownMs: policy.rateLimitCooldownMs,
  });
  const to = transition('running', decision.move, { parentsDone: true });
  if (to === null) return null;
  const error = ending.error ?? null;
  const set: TaskColumns = {
    status: to,
    updated_at: now,
    current_run_id: null,
    lease_expires_at: null,
    last_heartbeat_at: null,
    terminating: null,
    consecutive_failures: decision.failures,
    not_before: decision.notBefore,
  };
  if (decision.counted) set.last_failure_error = error;
  if (decision.move === 'complete') {
    set.completed_at = now;
    set.summary = ending.summary ?? null;
    set.result = ending.result === undefined ? null : JSON.stringify(ending.result);
    set.block_reason = null;
  }
  if (decision.move === 'block') set.block_reason = ending.blockReason ?? 'blocked by the worker';
  if (decision.move === 'give_up') {
    set.block_reason = `gave up after ${decision.failures} failure${decision.failures === 1 ? '' : 's'}: ${ending.outcome}${error ? ` (${lastLine(error)})` : ''}`;
  }
  const expect = {
    status: 'running' as const,
    runId: ending.runId,
    terminating: ending.terminating ?? null,
  };
  if (!board.tasks.cas(ending.taskId, expect, set)) return null;
  board.runs.close(ending.runId, now, {
    outcome: ending.outcome,
    exitCode: ending.exitCode ?? null,
    signal: ending.signal ?? null,
    error,
    summary: ending.summary ?? null,
    procGone: ending.procGone ?? false,
  });
  const run = board.runs.get(ending.runId);
  emit({
    taskId: ending.taskId,
    runId: ending.runId,
    kind: ending.outcome,
    payload: {
      exitCode: ending.exitCode ?? null,
      signal: ending.signal ?? null,
      ...(error ? { error } : {}),
      ...(ending.summary ? { summary: ending.summary } : {}),
      ...(ending.blockReason ? { reason: ending.blockReason } : {}),
      prevPid: run?.pid ?? null,
      failures: decision.failures,
      ...ending.payload,
    },
  });
  if (decision.gaveUp) {
    emit({
      taskId: ending.taskId,
      runId: ending.runId,
      kind: 'gave_up',
      payload: { failures: decision.failures, outcome: ending.outcome, reason: set.block_reason },
    });
  }
  if (decision.move === 'complete') board.promoteChildren(ending.taskId, emit, now);
  return board.tasks.get(ending.taskId);
}

function lastLine(text: string): string {
  const line = text.trim().split('\n').at(-1) ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
