// At start: every running task's worker is adopted if it lives, or marked ended so its run is
// settled from what it left on disk (exit.json, result.json).
import { pidExists, startTimeNow } from '../../proc/index.js';
import type { Board } from '../board.js';
import { recordAdoption, recordFoundProcess, recordHost } from '../moves/records.js';
import type { LiveWorker, LiveWorkers } from './live-workers.js';
import type { DispatcherLog } from './log.js';
import type { Ownership } from '../hosts/ownership.js';
import { leaderOf } from '../store/records/run.js';
import { readProcRecord, runDir } from './run-files.js';

/** Registers every running task's worker in `live`; returns those already ended. */
export async function adoptRunning(
  board: Board,
  live: LiveWorkers,
  dataDir: string,
  log: DispatcherLog,
  owner: Ownership,
  host: { id: number; name: string },
  /** The cgroup a run was started in, if it has one (run-cgroups.ts). */
  cgroupOf: (runId: string) => string | null,
): Promise<LiveWorker[]> {
  const ended: LiveWorker[] = [];
  for (const task of await board.tasks.running()) {
    const run = task.currentRunId === null ? null : await board.runs.get(task.currentRunId);
    // Another host's run is that host's to supervise, or the takeover's once its lease is gone.
    if (!run || !owner.owns(run)) continue;
    if (run.hostId !== host.id) await board.transact((tx) => recordHost(tx, run.id, host));
    const known = leaderOf(run);
    const proc = known
      ? { ...known, pgid: run.pgid ?? known.pid }
      : readProcRecord(runDir(dataDir, run.id));
    if (proc && run.pid === null)
      await board.transact((tx) => recordFoundProcess(tx, run.id, proc));
    const leader = proc ? { pid: proc.pid, startTime: proc.startTime, bootId: proc.bootId } : null;
    const alive = leader !== null && pidExists(leader.pid, leader);
    const worker: LiveWorker = {
      runId: run.id,
      taskId: task.id,
      profile: run.profile,
      leader,
      child: null,
      cgroup: cgroupOf(run.id),
      keepDescendants: run.keepDescendants,
      startedAt: run.startedAt,
      sample: null,
      groupHeldUntil: alive ? startTimeNow() : null,
      log: log.child({ taskId: task.id, runId: run.id }),
    };
    live.add(worker);
    if (!alive) {
      worker.exit = null;
      ended.push(worker);
      continue;
    }
    // A termination the previous instance began is resumed by the tick, like any unfinished one.
    if (task.terminating === null) {
      await board.transact((tx) => recordAdoption(tx, task.id, run.id, leader.pid));
      worker.log.info({ workerPid: leader.pid }, 'worker adopted');
    }
  }
  return ended;
}
