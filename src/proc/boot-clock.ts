// A clock that never steps: milliseconds since boot, suspend included (CLOCK_BOOTTIME, read from
// /proc/uptime on Linux). A host's fence is measured on it: an NTP step or a VM's resume moves
// the wall clock, not this one, and a suspended machine's lease runs out on it as on the database's.
import { readFileSync } from 'node:fs';

const LINUX = process.platform === 'linux';

/** Milliseconds since boot (on other systems, since an arbitrary point that does not step). */
export function bootNowMs(): number {
  if (LINUX) {
    const text = readFileSync('/proc/uptime', 'latin1');
    return Math.round(Number.parseFloat(text) * 1000);
  }
  return Math.round(performance.timeOrigin + performance.now());
}
