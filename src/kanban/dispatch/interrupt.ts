// Container mode (shutdown.workers: "terminate"): where nothing outlives the daemon, a stop ends
// every worker itself, identity-checked, and records its run `interrupted` (not a failure), the
// task back to ready, rather than leaving the next start to find it dead with no exit record.
import type { Kanban } from '../kanban.js';
import type { RunRecord } from '../store/records/run.js';
import type { DispatcherLog } from './log.js';

export async function interruptAll(kanban: Kanban, log: DispatcherLog): Promise<void> {
  const { board, terminations, ownership } = kanban;
  const claimed: RunRecord[] = [];
  for (const task of await board.tasks.running()) {
    // Only this host's workers: another host's are that host's to end.
    const current = task.currentRunId === null ? null : await board.runs.get(task.currentRunId);
    if (!current || !ownership.owns(current)) continue;
    const run = await terminations.begin(task.id, 'interrupt', current.id);
    if (run) claimed.push(run);
  }
  const ended = await Promise.allSettled(
    claimed.map((run) => terminations.finish(run, 'interrupt')),
  );
  ended.forEach((result, i) => {
    const run = claimed[i]!;
    const fields = { taskId: run.taskId, runId: run.id };
    // A survivor keeps `terminating`; the next instance resumes it.
    if (result.status === 'rejected')
      log.warn({ ...fields, err: result.reason as unknown }, 'worker not interrupted');
    else if (result.value.deferred)
      log.warn({ ...fields, ...result.value.report }, 'worker survived the interrupt');
  });
}
