// Ending everything of a run: its process group and its marked background jobs, identity-checked.
import { currentBootId, terminateRun, type TerminateResult } from '../../proc/index.js';
import { leaderOf, type RunRecord } from '../store/run-store.js';

/**
 * Ends what is left of a run. `groupHeldUntil` is a start time by which the run's group was
 * known to be still the run's (see RunProof), or null when that is not known.
 */
export type RunTerminator = (
  run: RunRecord,
  groupHeldUntil: number | null,
) => Promise<TerminateResult>;

/** The environment entry every process of a run carries: proof it is ours once its leader is gone. */
export function runMarker(runId: string): string {
  return `GATEHOUSE_RUN_ID=${runId}`;
}

/**
 * Terminates a run's processes (SPEC §6 "Termination", "Nothing outlives its run"). A run whose
 * leader was never recorded (the daemon died between the spawn and proc.json) is ended by its
 * marker alone: only processes carrying its own random run id.
 */
export function runTerminator(opts: { graceMs: number; killWaitMs: number }): RunTerminator {
  return (run, groupHeldUntil) => {
    const marker = runMarker(run.id);
    const leader = leaderOf(run);
    if (!leader) return terminateRun(UNKNOWN_LEADER(), { marker, groupHeldUntil: null }, opts);
    return terminateRun(leader, { marker, groupHeldUntil }, opts);
  };
}

/** No pid: no group is signalled as one, every process is proven by the marker. */
const UNKNOWN_LEADER = () => ({ pid: 0, startTime: 0, bootId: currentBootId() });
