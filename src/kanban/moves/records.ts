// Events that record what happened to a run or a platform without moving any task.
import type { EventPayloads } from '../model/events.js';
import type { ExitRecord, ProcRecord } from '../model/types.js';
import type { Tx } from './tx.js';

/** The worker's process started: its identity is stored and `spawned` written. */
export async function recordSpawn(
  tx: Tx,
  taskId: string,
  runId: string,
  proc: ProcRecord,
  profile: string,
): Promise<void> {
  await tx.store.runs.recordProcess(runId, proc);
  tx.emit({ taskId, runId, kind: 'spawned', payload: { pid: proc.pid, profile } });
}

/**
 * Resource samples of live workers: each run keeps its peaks. Asked together: on PostgreSQL
 * they go out in one write and are answered in one round trip, not one each.
 */
export async function recordSamples(
  tx: Tx,
  samples: readonly { runId: string; cpu: number; rss: number }[],
): Promise<void> {
  await Promise.all(
    samples.map(({ runId, cpu, rss }) => tx.store.runs.recordSample(runId, cpu, rss)),
  );
}

/** A run's process known only from its folder (its spawn was never recorded): stored now. */
export async function recordFoundProcess(tx: Tx, runId: string, proc: ProcRecord): Promise<void> {
  await tx.store.runs.recordProcess(runId, proc);
}

export async function recordAdoption(
  tx: Tx,
  taskId: string,
  runId: string,
  pid: number,
): Promise<void> {
  tx.emit({ taskId, runId, kind: 'adopted', payload: { pid } });
}

/**
 * A run this host found in its data dir that an earlier registration of it claimed (its lease
 * ran out while the daemon was down) is this host's from now on: not another host's to take over.
 */
export async function recordHost(
  tx: Tx,
  runId: string,
  host: { id: number; name: string },
): Promise<void> {
  await tx.store.runs.assignHost(runId, host.id, host.name);
}

/** A closed run's process has ended (its verdict came first, through the API or a termination). */
export async function recordExitStatus(
  tx: Tx,
  runId: string,
  exit: ExitRecord | null,
): Promise<void> {
  if (exit) await tx.store.runs.recordExit(runId, exit);
}

/** A closed run whose profile keeps its descendants: nothing of it is ours to end. */
export async function recordGone(tx: Tx, runId: string): Promise<void> {
  await tx.store.runs.markGone(runId, tx.now);
}

/** What was left of a closed run was ended; the run's processes are gone unless some survived. */
export async function recordLeftovers(
  tx: Tx,
  taskId: string,
  runId: string,
  result: { ended: number[]; sigkill: boolean; survived: boolean },
): Promise<void> {
  if (result.ended.length > 0) {
    tx.emit({
      taskId,
      runId,
      kind: 'worker_terminated',
      payload: { pids: result.ended, sigkill: result.sigkill, survived: result.survived },
    });
  }
  if (!result.survived) await tx.store.runs.markGone(runId, tx.now);
}

export type PlatformEventKind = Extract<
  keyof EventPayloads,
  `platform_${string}` | `breaker_${string}`
>;

export async function recordPlatformEvent<K extends PlatformEventKind>(
  tx: Tx,
  kind: K,
  payload: EventPayloads[K],
): Promise<void> {
  tx.emit({ taskId: null, runId: null, kind, payload });
}

/** A platform refused a task's notification for good: recorded, and the chat's cursor moves on. */
export async function recordDroppedNotification(
  tx: Tx,
  taskId: string | null,
  payload: EventPayloads['notification_dropped'],
): Promise<void> {
  tx.emit({ taskId, runId: null, kind: 'notification_dropped', payload });
}
