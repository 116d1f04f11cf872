// The one clock gatehouse reads time from, given to whatever needs it (docs/architecture.md):
// the wall clock, for every time recorded or compared with one recorded (tests move it), and the
// boot clock, which never steps, for a host's fence. How long this process has waited for
// something is neither: that is performance.now(), monotonic and this process's own.
import { bootNowMs } from './proc/index.js';

export interface Clock {
  /** Epoch milliseconds. */
  wall(): number;
  /** Milliseconds since boot, suspend included (CLOCK_BOOTTIME): never steps. */
  boot(): number;
}

export const systemClock: Clock = { wall: () => Date.now(), boot: bootNowMs };

/** The system's boot clock with another wall clock: what a test that moves time gives. */
export function wallClock(wall: () => number): Clock {
  return { wall, boot: bootNowMs };
}
