// What a daemon and its fence keeper (fence-keeper.ts, a program of its own) say to each other.
import type { ProcessIdentity } from './identity.js';

/** Where each keeper of a data dir says who it is (`<pid>.json`: pid, start time, boot id). */
export const KEEPERS_DIR = 'keepers';

/**
 * The keeper's one line on its stdout (after a newline, so that it is a line of its own), once it
 * reads its stdin: what the daemon wrote to the pipe before it is read by a live keeper from then
 * on.
 */
export const KEEPER_UP = 'up';

/** One line on the keeper's stdin. Times are bootNowMs() milliseconds. */
export type KeeperMessage =
  | { fence: { termAt: number; killAt: number } }
  | { guard: { runId: string; leader: ProcessIdentity | null; cgroup: string | null } }
  | { release: string };
