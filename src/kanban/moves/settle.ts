// Move: end a running task's current run (running → done, blocked or ready) by the outcome
// policy; the run is closed and the outcome event written in the same transaction.
import type { RunEndPayload } from '../model/events.js';
import { decideOutcome } from '../model/outcome-policy.js';
import type { RunOutcome, Task } from '../model/types.js';
import type { RunRecord } from '../store/records/run.js';
import type { RunEvidence } from '../../workspaces/types.js';
import type { RunAgent } from '../../agents/types.js';
import { newPrSync } from '../model/pull-request.js';
import { applyMove } from './apply.js';
import { leavePrOpen } from './pull-request.js';
import { together } from './together.js';
import { orphanChildren, promoteChildren } from './children.js';
import type { Tx } from './tx.js';

export interface RunEnding {
  taskId: string;
  runId: string;
  outcome: RunOutcome;
  /** The pending termination this settles (undefined: whatever is pending). */
  terminating?: string | null;
  exitCode?: number | null;
  signal?: string | null;
  error?: string | null;
  summary?: string | null;
  result?: unknown;
  blockReason?: string | null;
  /** Extra fields for the outcome's event (the termination report). */
  payload?: Partial<RunEndPayload>;
  /** Nothing of the run's processes is left (or it is not ours to clean up). */
  procGone?: boolean;
  /** A start time by which the run's group was proven its own, for ending its leftovers later. */
  groupHeldUntil?: number | null;
  /** What the run did to its task's worktree (docs/workspaces.md). */
  workspace?: RunEvidence | null;
  /** The repository's own checkout changed while it ran: its name and the changed paths. */
  escaped?: { repo: string; paths: string[] } | null;
  /** Its calls of gatehouse's MCP tools the agent's own rules cancelled (docs/mcp.md). */
  mcpCancelled?: { tool: string; message: string }[];
  /** Its worktree was gone when the run ended (deleted by hand, or by anything else): its path. */
  workspaceLost?: string | null;
  /** An agent run's session and usage (docs/agents.md). */
  agent?: RunAgent | null;
  /** A rate limit holds the run's profile until then (epoch ms), for this reason. */
  hold?: { until: number; reason: string } | null;
  /** The session it asked to resume was gone (docs/agents.md): why. */
  resumeFailed?: string | null;
  /**
   * The run as its caller read it just before, not read again: what settling reads of it (its
   * profile, pid and start) does not change once it has spawned.
   */
  run?: RunRecord;
}

export const ESCAPE_REASON = "the repository's own checkout changed while it ran";

/** A completed run whose worktree was gone when it ended: its work cannot be seen, a person looks. */
function lostEnding(ending: RunEnding): RunEnding {
  if (!ending.workspaceLost || ending.outcome !== 'completed') return ending;
  return {
    ...ending,
    outcome: 'blocked',
    blockReason: `its workspace ${ending.workspaceLost} was gone when the run ended: what it did there is lost unless it was committed and pushed`,
  };
}

/** A completed run whose repository's checkout changed meanwhile is blocked for a person to look. */
function escapedEnding(ending: RunEnding): RunEnding {
  if (!ending.escaped || ending.escaped.paths.length === 0 || ending.outcome !== 'completed')
    return ending;
  return { ...ending, outcome: 'blocked', blockReason: ESCAPE_REASON };
}

export interface SettlementPolicy {
  failureLimit: number;
  rateLimitCooldownMs: number;
  /** Profiles whose completed runs wait in review (docs/workers.md) unless the task says otherwise. */
  reviewProfiles?: ReadonlySet<string>;
  /** Repositories whose tasks' work ends in a pull request (docs/pull-requests.md). */
  prRepos?: ReadonlySet<string>;
}

/**
 * Settles the task's current run. Returns the updated task, or null when the task is no longer
 * running that run (someone else settled it first).
 */
export async function settleRun(
  tx: Tx,
  policy: SettlementPolicy,
  asReported: RunEnding,
): Promise<Task | null> {
  const { store, now } = tx;
  const ending = lostEnding(escapedEnding(asReported));
  // The task and its run read together (one round trip on PostgreSQL).
  const [task, run] = await Promise.all([
    store.tasks.get(ending.taskId),
    ending.run?.id === ending.runId ? ending.run : store.runs.get(ending.runId),
  ]);
  if (!task || task.status !== 'running' || task.currentRunId !== ending.runId) return null;
  const decision = decideOutcome(ending.outcome, {
    failures: task.consecutiveFailures,
    limit: task.maxRetries ?? policy.failureLimit,
    exitCode: ending.exitCode ?? null,
    now,
    rateLimitCooldownMs: policy.rateLimitCooldownMs,
  });
  const error = ending.error ?? null;
  // Completed with a question it asked a person (docs/mcp.md): blocked until they answer.
  const asked =
    decision.move === 'complete' && task.question?.runId === ending.runId ? task.question : null;
  // Completed in a worktree of a repository with pull requests: its work is published next,
  // and the task waits in review for the PR (docs/pull-requests.md).
  const prRepo =
    decision.move === 'complete' &&
    !asked &&
    task.workspace?.kind === 'worktree' &&
    task.workspace.repo !== null &&
    // An attempt's work is compared first (docs/attempts.md): the picked one's branch is kept.
    task.attemptOf === null &&
    policy.prRepos?.has(task.workspace.repo)
      ? task.workspace.repo
      : null;
  // Completed, a task under review waits for a person instead of being done (docs/workers.md).
  const reviewing =
    decision.move === 'complete' &&
    !asked &&
    (prRepo !== null ||
      (task.review ?? (run !== null && (policy.reviewProfiles?.has(run.profile) ?? false))));
  const sync = prRepo
    ? { ...((await store.tasks.prSync(task.id)) ?? newPrSync(prRepo, null)), publish: ending.runId }
    : null;
  const move = asked ? 'block' : reviewing ? 'submit' : decision.move;
  const completing = decision.move === 'complete';
  const gaveUpReason = `gave up after ${decision.failures} failure${decision.failures === 1 ? '' : 's'}: ${ending.outcome}${error ? ` (${lastLine(error)})` : ''}`;
  const held = ending.hold && ending.outcome === 'rate_limited' ? ending.hold : null;
  // Past its budget (docs/budgets.md): blocked for a person to raise it, not counted as a failure.
  const overBudget = ending.outcome === 'budget_exceeded';
  const moved = await applyMove(tx, task, move, {
    // Held, its profile's hold keeps it waiting (and a release ends the wait at once).
    notBefore: held ? null : decision.notBefore,
    reason: asked
      ? `question: ${asked.text}`
      : decision.move === 'give_up'
        ? gaveUpReason
        : overBudget
          ? (ending.blockReason ?? error ?? 'budget reached')
          : (ending.blockReason ?? 'blocked by the worker'),
    ...(asked
      ? { blockKind: 'question' as const }
      : overBudget
        ? { blockKind: 'budget' as const }
        : {}),
    ...(ending.terminating !== undefined ? { expectTerminating: ending.terminating } : {}),
    details: {
      consecutive_failures: decision.failures,
      ...(decision.counted ? { last_failure_error: error } : {}),
      ...(completing
        ? {
            completed_at: reviewing || asked ? null : now,
            // Done (or in review): the follow-up it ran for is answered.
            instructions: null,
            summary: ending.summary ?? null,
            result: ending.result === undefined ? null : JSON.stringify(ending.result),
          }
        : {}),
      ...(sync ? { pr_sync: JSON.stringify(sync) } : {}),
    },
  });
  if (!moved) return null;
  if (held && run) await holdProfile(tx, run.profile, held, ending);
  if (ending.resumeFailed && ending.agent?.resumed)
    tx.emit({
      taskId: ending.taskId,
      runId: ending.runId,
      kind: 'session_resume_failed',
      payload: { sessionId: ending.agent.resumed, error: ending.resumeFailed },
    });
  for (const call of (ending.mcpCancelled ?? []).slice(0, 20))
    tx.emit({
      taskId: ending.taskId,
      runId: ending.runId,
      kind: 'mcp_call_cancelled',
      payload: {
        tool: call.tool,
        message: `${call.message} (the agent's own approval setting refused it, not gatehouse: see docs/mcp.md)`,
      },
    });
  if (ending.workspaceLost)
    tx.emit({
      taskId: ending.taskId,
      runId: ending.runId,
      kind: 'workspace_lost',
      payload: { path: ending.workspaceLost },
    });
  if (ending.escaped && ending.escaped.paths.length > 0)
    tx.emit({
      taskId: ending.taskId,
      runId: ending.runId,
      kind: 'workspace_escape',
      payload: ending.escaped,
    });
  tx.emit({
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
      durationMs: run ? Math.max(0, now - run.startedAt) : null,
      failures: decision.failures,
      ...(reviewing ? { review: true } : {}),
      ...(asked ? { question: asked.text } : {}),
      ...(sync ? { pullRequest: true } : {}),
      ...(ending.agent && run
        ? { agent: { profile: run.profile, usage: ending.agent.usage } }
        : {}),
      ...ending.payload,
    },
  });
  if (ending.outcome === 'archived') leavePrOpen(tx, task);
  if (decision.gaveUp) {
    tx.emit({
      taskId: ending.taskId,
      runId: ending.runId,
      kind: 'gave_up',
      payload: { failures: decision.failures, outcome: ending.outcome, reason: gaveUpReason },
    });
  }
  // The run closed, the children moved and the task read back together (one round trip on
  // PostgreSQL where the children are none to move). Every one ends before a failure is
  // thrown: a child's move must not go on after its move's savepoint was rolled back.
  const [, , settled] = await together([
    store.runs.close(ending.runId, now, {
      outcome: ending.outcome,
      exitCode: ending.exitCode ?? null,
      signal: ending.signal ?? null,
      error,
      summary: ending.summary ?? null,
      // A run that never had a process cannot leave one behind.
      procGone: ending.procGone ?? run?.pid === null,
      groupHeldUntil: ending.groupHeldUntil ?? null,
      workspace: ending.workspace ?? null,
      agent: ending.agent ?? null,
    }),
    completing && !reviewing && !asked
      ? promoteChildren(tx, ending.taskId)
      : decision.move === 'archive'
        ? orphanChildren(tx, ending.taskId)
        : null,
    store.tasks.get(ending.taskId),
  ]);
  return settled;
}

/** Holds the profile (a later hold already in force stays), with its event when it took. */
async function holdProfile(
  tx: Tx,
  profile: string,
  hold: { until: number; reason: string },
  ending: RunEnding,
): Promise<void> {
  if (!(await tx.store.holds.hold({ profile, ...hold, at: tx.now }))) return;
  tx.emit({
    taskId: ending.taskId,
    runId: ending.runId,
    kind: 'profile_held',
    payload: { profile, until: hold.until, reason: hold.reason },
  });
}

function lastLine(text: string): string {
  const line = text.trim().split('\n').at(-1) ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
