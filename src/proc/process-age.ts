// Which processes started before a moment, told without reading each one's stat: the inode of a
// /proc/<pid> directory is made no earlier than its process started and belongs to that process
// alone (a reused pid gets a new one), so an inode changed before the moment is of a process that
// started before it. Inode times are on the wall clock, so this is used only while the wall clock
// has kept step with the boot clock since the moment: after a step, every stat is read.
import { uptimeSeconds } from './boot-clock.js';

/** What is left of the two clocks' reading errors (/proc/uptime's 10 ms, a start time's tick). */
const MARGIN_MS = 1000;
/**
 * Drift between two readings that is not a step: NTP slews the wall clock by at most 500 ppm.
 * Capped below the margin, so what drifts unseen between two readings stays within it.
 */
const SLEW = 0.001;
const JITTER_MS = 50;
const UNSEEN_MS = MARGIN_MS / 2;

/** The wall clock minus the boot clock, in ms, now; null without /proc/uptime. */
function offsetNow(): { boot: number; offset: number } | null {
  const uptime = uptimeSeconds();
  if (uptime === null) return null;
  const boot = uptime * 1000;
  return { boot, offset: Date.now() - boot };
}

let last = offsetNow();
/** Boot-clock ms since which the wall clock has not stepped (as far as this process has seen). */
let steadySince = last?.boot ?? Infinity;
/** The smallest offset seen since then: a wall time of a moment in the span is at least this. */
let lowest = last?.offset ?? 0;

/** Reads both clocks; a step since the last reading starts the steady span again, now. */
function observe(): { boot: number; offset: number } | null {
  const now = offsetNow();
  if (now === null) return null;
  if (last !== null) {
    const elapsed = now.boot - last.boot;
    const allowed = Math.min(JITTER_MS + SLEW * elapsed, UNSEEN_MS);
    if (elapsed < 0 || Math.abs(now.offset - last.offset) > allowed) {
      steadySince = now.boot;
      lowest = now.offset;
    }
  }
  lowest = Math.min(lowest, now.offset);
  last = now;
  return now;
}

/**
 * The wall time before which a /proc/<pid> inode proves its process started before `sinceMs`
 * (boot clock), or null when it cannot be told so (the wall clock stepped since then, or before
 * this process watched it; no /proc): then every stat must be read.
 */
export function olderBefore(sinceMs: number): number | null {
  const now = observe();
  // The step was seen now but happened since the last reading: a moment this close may precede it.
  if (now === null || sinceMs <= steadySince + MARGIN_MS) return null;
  return sinceMs + lowest - MARGIN_MS;
}
