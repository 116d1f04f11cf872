// Events that record what happened to a run or a platform without moving any task.
import type { EventPayloads } from '../model/events.js';
import type { ExitRecord, ProcRecord } from '../model/types.js';
import type { Tx } from './tx.js';

/** The worker's process started: its identity is stored and `spawned` written. */
export function recordSpawn(
  tx: Tx,
  taskId: string,
  runId: string,
  proc: ProcRecord,
  profile: string,
): void {
  tx.store.runs.recordProcess(runId, proc);
  tx.emit({ taskId, runId, kind: 'spawned', payload: { pid: proc.pid, profile } });
}

export function recordAdoption(tx: Tx, taskId: string, runId: string, pid: number): void {
  tx.emit({ taskId, runId, kind: 'adopted', payload: { pid } });
}

/** A closed run's process has ended (its verdict came first, through the API or a termination). */
export function recordExitStatus(tx: Tx, runId: string, exit: ExitRecord | null): void {
  if (exit) tx.store.runs.recordExit(runId, exit);
}

/** What was left of a closed run was ended; the run's processes are gone unless some survived. */
export function recordLeftovers(
  tx: Tx,
  taskId: string,
  runId: string,
  result: { ended: number[]; sigkill: boolean; survived: boolean },
): void {
  if (result.ended.length > 0) {
    tx.emit({
      taskId,
      runId,
      kind: 'worker_terminated',
      payload: { pids: result.ended, sigkill: result.sigkill, survived: result.survived },
    });
  }
  if (!result.survived) tx.store.runs.markGone(runId, tx.now);
}

export type PlatformEventKind = Extract<
  keyof EventPayloads,
  `platform_${string}` | `breaker_${string}`
>;

export function recordPlatformEvent<K extends PlatformEventKind>(
  tx: Tx,
  kind: K,
  payload: EventPayloads[K],
): void {
  tx.emit({ taskId: null, runId: null, kind, payload });
}

/** A platform refused a task's notification for good: recorded, and the chat's cursor moves on. */
export function recordDroppedNotification(
  tx: Tx,
  taskId: string | null,
  payload: EventPayloads['notification_dropped'],
): void {
  tx.emit({ taskId, runId: null, kind: 'notification_dropped', payload });
}
