// The data dir's `fence` file: when to TERM and when to KILL their group, in epoch seconds, read
// by the run wrappers of gatehouse versions before the fence keeper, so that their runs adopted
// after an upgrade are not ended at once. Nothing of this version reads it (fence.ts). It goes in
// the first release after 0.1.x: by then no wrapper of an older version can still be running.
import { join } from 'node:path';
import { writeAtomic } from '../dispatch/run-files.js';

const LEGACY_FENCE_FILE = 'fence';

/** Now: every older wrapper's run ends at once (the lease is gone). */
export const FENCE_NOW = '0 0';

/** The line for TERM at `termAt` and KILL at `killAt`, both on the boot clock. */
export function legacyFenceLine(termAt: number, killAt: number, wallMinusBoot: number): string {
  return `${Math.floor((wallMinusBoot + termAt) / 1000)} ${Math.floor((wallMinusBoot + killAt) / 1000)}`;
}

/** Best effort: only older versions' run wrappers read it; a full disk must not stop this host. */
export function writeLegacyFence(dataDir: string, line: string): void {
  try {
    writeAtomic(join(dataDir, LEGACY_FENCE_FILE), `${line}\n`);
  } catch {
    // older wrappers take a file they cannot read as expired: their runs end, as they would
  }
}
