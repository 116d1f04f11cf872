// Moves: a host joins the board, and a host whose lease ran out is declared dead, its open runs
// ending as `lost` (a counted failure) so their tasks go back to ready, or as the termination
// that host had begun on them.
import type { Host } from '../model/types.js';
import type { NewHost } from '../store/records/host.js';
import { settleRun, type SettlementPolicy } from './settle.js';
import { isTerminationOp, TERMINATION_OUTCOME } from './termination.js';
import type { Tx } from './tx.js';

export async function joinBoard(tx: Tx, host: NewHost): Promise<Host> {
  const joined = await tx.store.hosts.register(host);
  tx.emit({
    taskId: null,
    runId: null,
    kind: 'host_joined',
    payload: { hostId: joined.id, name: joined.name, version: joined.version },
  });
  return joined;
}

/**
 * Declares `host` dead and ends its open runs as lost; null when another host did it first (or
 * it renewed meanwhile: its lease is checked again under the write).
 */
export async function declareDead(
  tx: Tx,
  policy: SettlementPolicy,
  host: Host,
): Promise<{ host: Host; lost: number } | null> {
  const dead = await tx.store.hosts.markDead(host.id, host.leaseExpiresAt);
  if (!dead) return null;
  let lost = 0;
  for (const run of await tx.store.runs.openOnHost(host.id)) {
    // A termination that host had begun (an archive, a reclaim, a timeout) ends the run its way:
    // the operator's word and the clock's hold; only a run ended by nothing else is lost.
    const pending = await tx.store.tasks.terminatingOf(run.taskId);
    const outcome = isTerminationOp(pending) ? TERMINATION_OUTCOME[pending] : 'lost';
    const settled = await settleRun(tx, policy, {
      taskId: run.taskId,
      runId: run.id,
      outcome,
      error: `its host ${host.name} (host ${host.id}) stopped renewing its lease`,
      // Its processes were on that host: not ours to find or signal. That host's run wrapper
      // ended them before its lease ran out.
      procGone: true,
    });
    if (settled && outcome === 'lost') lost++;
  }
  // Its ended runs whose processes it had not yet seen gone: nobody else can look for them (they
  // were on that host, ended by its fence), and a lingering run would keep its task from a claim.
  for (const run of await tx.store.runs.unreaped()) {
    if (run.hostId === host.id) await tx.store.runs.markGone(run.id, tx.now);
  }
  tx.emit({
    taskId: null,
    runId: null,
    kind: 'host_dead',
    payload: { hostId: dead.id, name: dead.name, version: dead.version, lostRuns: lost },
  });
  return { host: dead, lost };
}
