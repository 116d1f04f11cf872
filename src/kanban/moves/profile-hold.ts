// Move: an operator ends a profile's rate-limit hold early (docs/agents.md); its tasks may start again.
import type { Tx } from './tx.js';

/** Whether a hold was in force (and is now gone). */
export async function releaseHold(tx: Tx, profile: string, by: string): Promise<boolean> {
  if (!(await tx.store.holds.release(profile, tx.now))) return false;
  tx.emit({ taskId: null, runId: null, kind: 'profile_released', payload: { profile, by } });
  return true;
}
