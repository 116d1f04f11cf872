// `--replace`: ending a verified owner in order (mark, TERM, wait, KILL only if still it, wait).
import { systemClock } from '../clock.js';
import { writeFileSync, readFileSync, rmSync } from 'node:fs';
import { terminateProcess } from '../proc/index.js';
import { ExitCode, ExitError } from './exit-codes.js';
import type { PidRecord } from './pid-file.js';

export const TAKEOVER_FILE = 'takeover.json';

export interface TakeoverMark {
  by: number;
  target: number;
  at: number;
}

/** Tells the owner its end is a planned takeover (it logs this and exits 0). */
export function markTakeover(path: string, target: number): void {
  const mark: TakeoverMark = { by: process.pid, target, at: systemClock.wall() };
  writeFileSync(path, JSON.stringify(mark));
}

/** The mark naming `self` as the target, if any. */
export function readTakeover(path: string, self: number): TakeoverMark | null {
  try {
    const mark = JSON.parse(readFileSync(path, 'utf8')) as Partial<TakeoverMark>;
    return mark.target === self && typeof mark.by === 'number' ? (mark as TakeoverMark) : null;
  } catch {
    return null;
  }
}

export function clearTakeover(path: string): void {
  rmSync(path, { force: true });
}

/**
 * Ends the owner named by `owner` (already verified live). A zombie counts as ended. Throws
 * ExitError(1) if it survives SIGKILL; its files are then left untouched.
 */
export async function endOwner(
  owner: PidRecord,
  markPath: string,
  opts: { timeoutMs: number; killTimeoutMs: number },
): Promise<{ sigkill: boolean }> {
  markTakeover(markPath, owner.pid);
  const result = await terminateProcess(
    { pid: owner.pid, startTime: owner.startTime, bootId: owner.bootId },
    { graceMs: opts.timeoutMs, killWaitMs: opts.killTimeoutMs },
  );
  if (result.survived) {
    clearTakeover(markPath);
    throw new ExitError(
      ExitCode.failure,
      `the running instance (pid ${owner.pid}) survived SIGTERM and SIGKILL; leaving it and its files alone`,
    );
  }
  return { sigkill: result.sigkill };
}
