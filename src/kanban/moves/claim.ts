// Move: claim a ready task for a new run (ready → running), with a lease; parents re-checked.
import { hashToken, newRunId, newRunToken } from '../model/ids.js';
import { parentSatisfied } from '../model/transitions.js';
import type { Task } from '../model/types.js';
import type { RunRecord } from '../store/records/run.js';
import { WRITES } from '../store/records/task-writes.js';
import { applyMove } from './apply.js';
import { withinBudget, type ProfileBudgets } from './budget.js';

const NO_BUDGETS: ProfileBudgets = { task: null, daily: null };
import { together } from './together.js';
import type { Tx } from './tx.js';

export interface ClaimRequest {
  taskId: string;
  profile: string;
  /** This host's name (cluster.hostName), recorded on the run. */
  host: string;
  /** This host's id on the board. */
  hostId: number;
  leaseMs: number;
  keepDescendants: boolean;
  /**
   * Its profile may be held by a rate limit (an agent's, docs/agents.md): checked under the claim,
   * since a pass may have read the holds before one was set.
   */
  checkHold?: boolean;
  /** Where the run's log goes, from its id. */
  logPathFor: (runId: string) => string;
  /** Its profile's budgets (docs/budgets.md); the task's own is checked whatever they are. */
  budgets?: ProfileBudgets;
}

export interface Claim {
  task: Task;
  run: RunRecord;
  /** The run's secret, handed to the worker; only its hash is stored. */
  token: string;
}

/**
 * Claims the task if it is still ready, due, all its parents are done and nothing of its last
 * run is alive; null otherwise.
 */
export async function claimTask(tx: Tx, req: ClaimRequest): Promise<Claim | null> {
  const { store, now } = tx;
  // Asked together, in this order (on PostgreSQL one round trip, not four):
  // - a host whose lease ran out (frozen between its check and this commit) claims nothing: it
  //   may be declared dead, and its runs taken over, at any moment. The host row first, then
  //   the task's, in the order a host declared dead takes them;
  // - a row another host is writing (claiming it, most likely) is passed by, not waited for;
  // - never two workers: the next run waits until nothing of the last one is alive.
  const [leased, task, holds, lingering] = await together([
    store.hosts.holdsLease(req.hostId),
    store[WRITES].lockReady(req.taskId),
    req.checkHold ? store.holds.active(now) : [],
    store.runs.hasLingering(req.taskId),
  ]);
  if (!leased || !task || (task.notBefore !== null && task.notBefore > now)) return null;
  if (holds.some((h) => h.profile === req.profile)) return null;
  if (lingering) return null;
  for (const p of task.parents) if (!parentSatisfied(await store.tasks.get(p))) return null;
  if (!(await withinBudget(tx, task, req.profile, req.budgets ?? NO_BUDGETS))) return null;
  const runId = newRunId();
  const token = newRunToken();
  const moved = await applyMove(tx, task, 'claim', {
    runId,
    leaseExpiresAt: now + req.leaseMs,
    details: { started_at: now },
  });
  if (!moved) return null;
  // The run made and the task read back together (one round trip on PostgreSQL).
  const [run, claimed] = await together([
    store.runs.create({
      id: runId,
      taskId: task.id,
      profile: req.profile,
      host: req.host,
      hostId: req.hostId,
      tokenHash: hashToken(token),
      startedAt: now,
      logPath: req.logPathFor(runId),
      keepDescendants: req.keepDescendants,
    }),
    store.tasks.get(task.id),
  ]);
  tx.emit({
    taskId: task.id,
    runId,
    kind: 'claimed',
    // How long it waited since its last change (made ready, released, edited), and whether it
    // is tried again after a counted failure.
    payload: {
      profile: req.profile,
      waitedMs: Math.max(0, now - task.updatedAt),
      retry: task.consecutiveFailures > 0,
    },
  });
  return { task: claimed!, run, token };
}
