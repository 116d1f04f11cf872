// Ending everything of a run: its process group and its marked background jobs, identity-checked.
import { terminateRun, type TerminateResult } from '../../proc/index.js';
import type { RunRecord } from '../store/run-store.js';

/**
 * Ends what is left of a run. `groupHeldUntil` is a start time by which the run's group was
 * known to be still the run's (see RunProof), or null when that is not known.
 */
export type RunTerminator = (
  run: RunRecord,
  groupHeldUntil: number | null,
) => Promise<TerminateResult>;

const NOTHING_TO_END: TerminateResult = {
  terminated: true,
  sigkill: false,
  survived: false,
  ended: [],
  survivors: [],
};

/** The environment entry every process of a run carries: proof it is ours once its leader is gone. */
export function runMarker(runId: string): string {
  return `GATEHOUSE_RUN_ID=${runId}`;
}

/** Terminates a run's processes (SPEC §6 "Termination", "Nothing outlives its run"). */
export function runTerminator(opts: { graceMs: number; killWaitMs: number }): RunTerminator {
  return (run, groupHeldUntil) => {
    if (run.pid === null || run.startTime === null || run.bootId === null)
      return Promise.resolve(NOTHING_TO_END);
    const leader = { pid: run.pid, startTime: run.startTime, bootId: run.bootId };
    return terminateRun(leader, { marker: runMarker(run.id), groupHeldUntil }, opts);
  };
}
