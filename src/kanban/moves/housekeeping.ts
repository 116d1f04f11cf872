// Retention's writes, in one transaction: run folders marked pruned, old events, delivery ids
// and idempotency keys removed. None of them changes a task.
import type { Tx } from './tx.js';

export type Pruned = Record<'run_folders' | 'events' | 'deliveries' | 'idempotency_keys', number>;

export async function prune(
  tx: Tx,
  what: {
    /** Runs whose folders were removed. */
    prunedRuns: readonly string[];
    /** Events written before this go, at most eventLimit of them (null: events are kept). */
    eventsBefore: number | null;
    eventLimit: number;
    /** Inbound delivery ids older than this are forgotten. */
    deliveriesBefore: number;
    /** Idempotency keys sent before this (api.idempotencyHours ago) are forgotten. */
    keysBefore: number;
  },
): Promise<Pruned> {
  for (const runId of what.prunedRuns) await tx.store.runs.markPruned(runId, tx.now);
  return {
    run_folders: what.prunedRuns.length,
    events:
      what.eventsBefore === null
        ? 0
        : await tx.store.events.pruneBefore(what.eventsBefore, what.eventLimit),
    deliveries: await tx.store.platforms.forgetDeliveries(what.deliveriesBefore),
    idempotency_keys: await tx.store.idempotency.sweep(what.keysBefore),
  };
}
