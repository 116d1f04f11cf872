// Retention's writes: run folders marked pruned, old events and delivery ids removed. None of
// them changes a task.
import type { Tx } from './tx.js';

/** The runs whose folders were removed. */
export async function markPruned(tx: Tx, runIds: readonly string[]): Promise<void> {
  for (const runId of runIds) await tx.store.runs.markPruned(runId, tx.now);
}

/** Deletes up to `limit` of the oldest events written before `before`; how many. */
export function pruneEvents(tx: Tx, before: number, limit: number): Promise<number> {
  return tx.store.events.pruneBefore(before, limit);
}

/** Forgets inbound delivery ids older than `before`; how many. */
export function forgetDeliveries(tx: Tx, before: number): Promise<number> {
  return tx.store.platforms.forgetDeliveries(before);
}
