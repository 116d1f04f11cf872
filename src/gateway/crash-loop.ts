// The crash-loop guard: back off before starting after too many unclean ends in a short window.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';

export interface CrashLoopOptions {
  maxStarts: number;
  windowMs: number;
  maxBackoffMs: number;
}

interface StartEntry {
  at: number;
  unclean: boolean;
  /** Not a start: the start before it failed before serving (a port held by another program). */
  failed?: boolean;
}

const KEEP = 100;

function readEntries(path: string): StartEntry[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const entries: StartEntry[] = [];
  for (const line of text.split('\n')) {
    const [at, kind] = line.split(' ');
    if (at && /^\d+$/.test(at) && (kind === 'unclean' || kind === 'clean')) {
      entries.push({ at: Number(at), unclean: kind === 'unclean' });
    } else if (at && /^\d+$/.test(at) && kind === 'failed') {
      entries.push({ at: Number(at), unclean: true, failed: true });
    }
  }
  return entries;
}

/** Unclean starts in the window since the last clean one, newest last. */
export function uncleanStreak(entries: StartEntry[], now: number, windowMs: number): number {
  let count = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (!entry.unclean || now - entry.at > windowMs) break;
    if (!entry.failed) count++;
  }
  return count;
}

/** Milliseconds to wait: 0 up to `maxStarts`, then 1 s, 2 s, 4 s … capped. */
export function backoffMs(streak: number, opts: CrashLoopOptions): number {
  if (streak <= opts.maxStarts) return 0;
  return Math.min(opts.maxBackoffMs, 1000 * 2 ** (streak - opts.maxStarts - 1));
}

/**
 * This start failed before it served (exit 1: a port held by another program, a resolver not
 * up): the next start counts as following an unclean end, so the guard paces a loop of them.
 */
export function recordFailedStart(path: string, now: number): void {
  appendFileSync(path, `${now} failed\n`);
}

/** Records this start in starts.log and says how long to wait before serving. */
export function recordStart(
  path: string,
  unclean: boolean,
  now: number,
  opts: CrashLoopOptions,
): { streak: number; delayMs: number } {
  const before = readEntries(path);
  // A start after one that failed before serving follows an unclean end, as after a crash.
  const entries = [...before, { at: now, unclean: unclean || before.at(-1)?.failed === true }];
  const lines = entries
    .slice(-KEEP)
    .map((e) => `${e.at} ${e.failed ? 'failed' : e.unclean ? 'unclean' : 'clean'}\n`);
  if (entries.length > KEEP) writeFileSync(path, lines.join(''));
  else appendFileSync(path, lines.at(-1)!);
  const streak = uncleanStreak(entries, now, opts.windowMs);
  return { streak, delayMs: backoffMs(streak, opts) };
}
