// Polling with a deadline, for conditions the OS offers no event for (another process's end).
import { setTimeout as sleep } from 'node:timers/promises';

/** Resolves true as soon as `done()` holds, false once `timeoutMs` has passed without it. */
export async function waitUntil(
  done: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pollMs = 20,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await done()) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await sleep(Math.min(pollMs, left));
  }
}
