// Ending everything of a run: its process group and its marked background jobs, identity-checked.
import { terminateMarkedRun, type TerminateResult } from '../../proc/index.js';
import { leaderOf, type RunRecord } from '../store/records/run.js';

/**
 * Ends what is left of a run. `groupHeldUntil` is a start time by which the run's group was
 * known to be still the run's (see RunProof), or null when that is not known.
 */
export type RunTerminator = (
  run: RunRecord,
  groupHeldUntil: number | null,
) => Promise<TerminateResult>;

/**
 * Terminates a run's processes (docs/workers.md "Termination", "Nothing outlives its run"). A run whose
 * leader was never recorded (the daemon died between the spawn and proc.json) is ended by its
 * marker alone.
 */
export function runTerminator(opts: { graceMs: number; killWaitMs: number }): RunTerminator {
  return (run, groupHeldUntil) => terminateMarkedRun(run.id, leaderOf(run), groupHeldUntil, opts);
}
