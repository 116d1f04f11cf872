// Moves that keep a running task running: a heartbeat from its worker, a lease extended.
import { WRITES } from '../store/records/task-writes.js';
import type { Tx } from './tx.js';

/** Extends the lease of a running task that is not being terminated. */
export async function extendLease(
  tx: Tx,
  taskId: string,
  runId: string,
  until: number,
): Promise<boolean> {
  const won = await tx.store[WRITES].change(
    taskId,
    { status: 'running', runId, terminating: null },
    { lease_expires_at: until },
  );
  if (won) tx.emit({ taskId, runId, kind: 'claim_extended', payload: { until } });
  return won;
}

/**
 * Records a worker's heartbeat (refreshing its lease clock). The event is written at most
 * once per `coalesceMs` per run; the heartbeat itself always counts.
 */
export async function heartbeat(
  tx: Tx,
  taskId: string,
  runId: string,
  note: string | undefined,
  coalesceMs: number,
): Promise<boolean> {
  const won = await tx.store[WRITES].change(
    taskId,
    { status: 'running', runId },
    { last_heartbeat_at: tx.now },
  );
  if (!won) return false;
  // A heartbeat of this run earlier in the same group is not written yet, but counts.
  const inGroup = tx.emitted.some((e) => e.runId === runId && e.kind === 'heartbeat');
  const last = inGroup ? tx.now : await tx.store.events.lastAt(taskId, runId, 'heartbeat');
  if (last === null || tx.now - last >= coalesceMs) {
    tx.emit({
      taskId,
      runId,
      kind: 'heartbeat',
      payload: note === undefined ? {} : { note },
    });
  }
  return true;
}
