// A clock that never steps: milliseconds since boot, suspend included (CLOCK_BOOTTIME, read from
// /proc/uptime on Linux). A host's fence is measured on it: an NTP step or a VM's resume moves
// the wall clock, not this one, and a suspended machine's lease runs out on it as on the database's.
import { readFileSync } from 'node:fs';

import { LINUX } from './platform.js';

/** Seconds since boot from /proc/uptime (Linux), or null when it cannot be read. */
export function uptimeSeconds(): number | null {
  if (!LINUX) return null;
  try {
    return Number.parseFloat(readFileSync('/proc/uptime', 'latin1'));
  } catch {
    return null;
  }
}

/**
 * Milliseconds since boot. Elsewhere (no /proc/uptime) the monotonic clock from this process's
 * start, which does not step but is this process's own: daemon and keeper agree only on Linux.
 */
export function bootNowMs(): number {
  const uptime = uptimeSeconds();
  return uptime === null
    ? Math.round(performance.timeOrigin + performance.now())
    : Math.round(uptime * 1000);
}
