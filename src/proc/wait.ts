// Polling with a deadline, for conditions the OS offers no event for (another process's end).
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves true as soon as `done()` holds, false once `timeoutMs` has passed without it. It
 * polls every `pollMs`; with `firstPollMs` smaller, the first polls come that soon and the gap
 * doubles up to `pollMs`: for a check that is cheap and usually true within milliseconds.
 */
export async function waitUntil(
  done: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pollMs = 20,
  firstPollMs = pollMs,
): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  let gap = Math.min(firstPollMs, pollMs);
  for (;;) {
    if (await done()) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await sleep(Math.min(gap, left));
    gap = Math.min(gap * 2, pollMs);
  }
}
