// A host whose lease is gone (cut off from the database for longer than it, or declared dead)
// comes back by itself, in the same process: it ends what is left of its runs here, without the
// database, then joins the board again as a new host, trying each second until the database
// answers. Nothing of the old runs is left alive beside what another host may now run.
import { setTimeout as sleep } from 'node:timers/promises';
import { terminateMarkedRun, waitUntil } from '../../proc/index.js';
import { cgroupPopulated, killCgroup } from '../../proc/cgroup.js';
import type { HostLease } from './host-lease.js';
import type { LiveWorker, LiveWorkers } from '../dispatch/live-workers.js';
import type { DispatcherLog } from '../dispatch/log.js';

export interface RejoinDeps {
  host: HostLease;
  live: LiveWorkers;
  /** Waits (bounded) for the endings and terminations already under way. */
  settleInFlight: () => Promise<void>;
  stopping: () => boolean;
  graceMs: number;
  log: DispatcherLog;
  /** Between attempts (ms). */
  retryMs?: number;
}

/**
 * Ends `workers` (TERM, the grace, KILL; identity-checked, escapees found by their run's marker),
 * again each second while any survives; false when the daemon stops meanwhile.
 */
async function endWorkers(
  workers: readonly LiveWorker[],
  deps: RejoinDeps,
  retryMs: number,
): Promise<boolean> {
  // Their exits no longer end runs here: the board is told by adoption, after the join.
  for (const w of workers) w.child?.ignoreExit();
  // Those that exited too: what they left behind (an escapee) is found by the run's marker.
  let left = workers.filter((w) => w.leader !== null || w.cgroup !== null);
  while (left.length > 0) {
    const results = await Promise.all(
      left.map((w) =>
        terminateMarkedRun(w.runId, w.leader, w.groupHeldUntil, {
          graceMs: deps.graceMs,
          killWaitMs: 5000,
        }),
      ),
    );
    // What is left in a run's cgroup left its group and dropped its marker: killed whole.
    for (const w of left) if (w.cgroup !== null) killCgroup(w.cgroup);
    await waitUntil(() => left.every((w) => w.cgroup === null || !cgroupPopulated(w.cgroup)), 2000);
    const survivors = left.filter(
      (w, i) => results[i]!.survived || (w.cgroup !== null && cgroupPopulated(w.cgroup)),
    );
    if (survivors.length === 0) return true;
    // Joining now would hand a new lease to a worker that outlived the old one: never two.
    deps.log.error(
      { runs: survivors.map((w) => w.runId) },
      'host: workers survived termination; it joins the board again once they are gone',
    );
    if (deps.stopping()) return false;
    await sleep(retryMs, undefined, { ref: false });
    left = survivors;
  }
  return true;
}

/**
 * Ends every worker this host supervises (TERM, the grace, KILL; identity-checked, escapees
 * found by their run's marker), again each second while any survives, then joins again. The
 * board records the old runs when it hears of them: as lost (another host declared this one
 * dead), or from their exit records, by the adoption that follows the join.
 */
export async function rejoinBoard(deps: RejoinDeps): Promise<void> {
  const retryMs = deps.retryMs ?? 1000;
  const ended = new Set<LiveWorker>();
  let workers = deps.live.all();
  for (;;) {
    if (!(await endWorkers(workers, deps, retryMs))) return;
    for (const w of workers) ended.add(w);
    await deps.settleInFlight();
    // A launch admitted before the lease was lost may have started its worker since: its spawn
    // runs on libuv's pool. Its wrapper starts nothing past the lease, and it is ended here too.
    workers = deps.live.all().filter((w) => !ended.has(w));
    if (workers.length === 0) break;
  }
  for (const w of ended) deps.live.remove(w);
  for (let attempt = 1; !deps.stopping(); attempt++) {
    try {
      await deps.host.rejoin();
      deps.log.warn(
        { hostId: deps.host.id, attempts: attempt },
        'host: joined the board again as a new host',
      );
      return;
    } catch (err) {
      if (attempt === 1 || attempt % 30 === 0)
        deps.log.warn({ err, attempts: attempt }, 'host: cannot join the board again yet');
      await sleep(retryMs, undefined, { ref: false });
    }
  }
}
